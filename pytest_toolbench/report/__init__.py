"""Reporting: terminal table and JSON results (controller side only)."""
