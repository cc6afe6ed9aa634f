"""banking_knowledge's ``get_atm_deposit_images_8473`` (upstream 1.0.1 ``tools.py``; read there, written here): the
scanned envelopes upstream holds for three deposits, and the text for any other Rho-Bank ATM deposit."""

from .banking_records import discoverable_tool

_DISCREPANCY = """
=== ATM DEPOSIT ENVELOPE SCAN ===
Envelope ID: {envelope}
Deposit Time: {time}
ATM Location: {location}

--- ENVELOPE CONTENTS ---
Item 1: Personal Check
  - Check Number: {check}
  - Drawn On: {bank}
  - Payee: {payee}
  - Amount: $875.00
  - Memo: "October rent refund"
  - Signature: Present and legible
  - Date on Check: {date}

Item 2: Cash
  - Denomination breakdown:
    * 2 x $100 bills = $200.00
    * 3 x $20 bills = $60.00
  - Total Cash: $260.00

--- DEPOSIT SUMMARY ---
Check Total: $875.00
Cash Total: $260.00
GRAND TOTAL: $1,135.00

--- MACHINE RECORD ---
Amount Recorded by ATM: $385.00
DISCREPANCY DETECTED: $750.00 difference

--- IMAGE QUALITY ---
Envelope scan: CLEAR
Check front: CLEAR
Check back (endorsement): CLEAR - endorsed "For Deposit Only - {payee}"
Cash image: CLEAR - bills visible and countable
"""
_PARTIAL = """
=== ATM DEPOSIT ENVELOPE SCAN ===
Envelope ID: ENV-2025-5847-00293
Deposit Time: 10:15 AM EST

--- ENVELOPE CONTENTS ---
Item 1: Personal Check
  - Check Number: 7392
  - Amount: $500.00

--- DEPOSIT SUMMARY ---
Check Total: $500.00
Cash Total: $0.00
GRAND TOTAL: $500.00

--- MACHINE RECORD ---
Amount Recorded by ATM: $500.00
No discrepancy detected.
"""
_CONFIRMED = ("Images clearly show deposit contents totaling $1,135.00. ATM machine recorded only $385.00. "
              "Discrepancy of $750.00 confirmed via image review.")
#: transaction id -> (ATM, envelope text, verification notes)
IMAGES = {
    "btxn_834027370c20": ("ATM #3921", _DISCREPANCY.format(
        envelope="ENV-2025-3921-00923", time="3:47 PM CST",
        location="Rho-Bank ATM #3921, Cedar Lane Branch, Austin, TX", check="7284", bank="First Texas Bank",
        payee="Derek Yamamoto", date="11/03/2025"), _CONFIRMED),
    "btxn_test_deposit_001": ("ATM #3921", _DISCREPANCY.format(
        envelope="ENV-2025-3921-00847", time="2:34 PM EST", location="Rho-Bank ATM #3921, 742 Oak Avenue, Portland, OR",
        check="4821", bank="First National Bank", payee="Linda Patterson", date="11/05/2025"), _CONFIRMED),
    "btxn_test_atm_dep_partial": ("ATM #5847", _PARTIAL,
                                  "Images confirm deposit matches recorded amount. No discrepancy found."),
}


class AtmImageTools:
    @discoverable_tool("read")
    def get_atm_deposit_images_8473(self, transaction_id: str) -> str:
        """Retrieve ATM deposit envelope/check images for a specific ATM deposit transaction.

        Args:
            transaction_id (string): The transaction ID of the ATM deposit to retrieve images for

        Returns:
            ATM deposit images retrieved successfully.
        """
        if not transaction_id:
            return "Error: Missing required parameter: transaction_id"
        txns = self.db["bank_account_transaction_history"]["data"]
        if transaction_id not in txns:
            return f"Error: Transaction '{transaction_id}' not found."
        txn = txns[transaction_id]
        if txn.get("type") != "atm_deposit":
            return (f"Error: Transaction '{transaction_id}' is not an ATM deposit. This tool only works for ATM "
                    f"deposit transactions.")
        description = txn.get("description", "")
        if "RHO-BANK" not in description.upper() and "RHOBANK" not in description.upper():
            return (f"Error: Transaction '{transaction_id}' is from a third-party ATM. Deposit images are only "
                    f"available for Rho-Bank ATM deposits. For third-party ATM disputes, a chargeback request must be "
                    f"submitted to the ATM network.")
        head = "ATM Deposit Image Retrieval Results\n=====================================\n"
        if transaction_id in IMAGES:
            atm, envelope, notes = IMAGES[transaction_id]
            return (f"{head}Transaction ID: {transaction_id}\nATM: {atm}\nDeposit Date: {txn.get('date', 'Unknown')}"
                    f"\n\n{envelope}\n\n--- VERIFICATION NOTES ---\n{notes}\n")
        return (f"{head}Transaction ID: {transaction_id}\nATM: {description}\nDeposit Date: "
                f"{txn.get('date', 'Unknown')}\nAmount Recorded: ${abs(txn.get('amount', 0)):.2f}\n\n"
                f"--- IMAGE STATUS ---\nStatus: IMAGES NOT AVAILABLE\nReason: Deposit images for this transaction have "
                f"either expired (older than 90 days) or were not captured by the ATM system.\n\nFor deposits without "
                f"available images, the dispute will proceed based on customer statement and ATM journal records only. "
                f"Investigation timeline may be extended.\n")
