"""banking_knowledge's discoverable agent tools for credit limits and payment history (upstream 1.0.1 ``tools.py``
``KnowledgeTools``; read there, written here)."""

from .banking_credit import _NOT_FOUND, _NOT_OWNER, _money, cli_request_id
from .banking_records import TODAY_STR, add_to_db, discoverable_tool, history, lookup


class CreditLimitTools:
    """Credit limit increases and payment history (a part of the agent's toolkit)."""

    @discoverable_tool("write")
    def submit_credit_limit_increase_request_7392(self, credit_card_account_id: str, user_id: str,
                                                  requested_increase_amount: int) -> str:
        """Submit a credit limit increase request for a customer's credit card.

        Args:
            credit_card_account_id (string): The credit card account ID to request increase for
            user_id (string): The customer's unique identifier in the system
            requested_increase_amount (integer): The dollar amount by which to increase the credit limit (e.g., 2500 for $2,500)

        Returns:
            Credit limit increase request submitted successfully.
        """
        if not credit_card_account_id or not user_id or requested_increase_amount is None:
            return "Error: Missing required parameters."
        try:
            requested_increase_amount = float(requested_increase_amount)
        except (TypeError, ValueError):
            return "Error: Invalid requested_increase_amount. Must be a whole number."
        if not requested_increase_amount.is_integer():
            return "Error: Invalid requested_increase_amount. Must be a whole number of dollars."
        requested_increase_amount = int(requested_increase_amount)
        if requested_increase_amount <= 0:
            return "Error: Requested increase amount must be positive."
        cards = self.db["credit_card_accounts"]["data"]
        if credit_card_account_id not in cards:
            return _NOT_FOUND.format(credit_card_account_id)
        if cards[credit_card_account_id].get("user_id") != user_id:
            return _NOT_OWNER.format(credit_card_account_id, user_id)
        request_id = cli_request_id(credit_card_account_id, user_id, requested_increase_amount)
        record = {"request_id": request_id, "credit_card_account_id": credit_card_account_id, "user_id": user_id,
                  "requested_increase_amount": requested_increase_amount, "submitted_at": TODAY_STR,
                  "status": "PENDING"}
        if not add_to_db(self.db, "credit_limit_increase_requests", request_id, record):
            return "Error: A similar request may already exist."
        return (f"Credit limit increase request submitted successfully.\n\n"
                f"Executed: submit_credit_limit_increase_request_7392\n  - Request ID: {request_id}\n"
                f"  - Account: {credit_card_account_id}\n  - Requested Increase: ${requested_increase_amount:,}\n"
                f"  - Status: PENDING")

    @discoverable_tool("read")
    def get_credit_limit_increase_history_4829(self, credit_card_account_id: str) -> str:
        """Retrieve the credit limit increase request history for a specific credit card account. Returns all previous CLI requests including dates, amounts, and statuses.

        Args:
            credit_card_account_id (string): The credit card account ID to check for CLI history

        Returns:
            Credit limit increase history retrieved.
        """
        if not credit_card_account_id:
            return "Error: Missing required parameter: credit_card_account_id"
        return history("Credit limit increase history retrieved.", "get_credit_limit_increase_history_4829",
                       f"Credit limit increase history for account {credit_card_account_id}:",
                       lookup(self.db, "credit_limit_increase_requests", "credit_card_account_id",
                              credit_card_account_id),
                       "\nNo credit limit increase requests found for this account.")

    @discoverable_tool("read")
    def get_payment_history_6183(self, credit_card_account_id: str, months: int) -> str:
        """Retrieve payment history for a credit card account.

        Args:
            credit_card_account_id (string): The credit card account ID to check payment history for
            months (integer): Number of months of payment history to retrieve

        Returns:
            Payment history retrieved.
        """
        if not credit_card_account_id or months is None:
            return "Error: Missing required parameters (credit_card_account_id, months)."
        try:
            months = int(months)
            if months <= 0:
                return "Error: months must be a positive integer."
        except (ValueError, TypeError):
            return "Error: Invalid months value. Must be a positive integer."
        payments = [payment for payment in self.db["payment_history"]["data"].values()
                    if payment.get("credit_card_account_id") == credit_card_account_id]
        if not payments:
            return f"No payment history found for account '{credit_card_account_id}'."
        payments.sort(key=lambda payment: payment.get("payment_date") or "", reverse=True)
        payments = payments[:months]
        on_time = 0
        for payment in payments:
            if payment.get("status") != "ON_TIME":
                break
            on_time += 1
        parts = [f"Payment history for account '{credit_card_account_id}' (last {months} months):",
                 f"Consecutive on-time payments: {on_time}"]
        parts.extend(f"\n  - Payment Date: {p.get('payment_date')}\n    Amount: {p.get('amount')}\n"
                     f"    Status: {p.get('status')}" for p in payments)
        return "\n".join(parts)

    @discoverable_tool("write")
    def approve_credit_limit_increase_5847(self, credit_card_account_id: str, user_id: str,
                                           new_credit_limit: int) -> str:
        """Approve and apply a credit limit increase for a customer's credit card.

        Args:
            credit_card_account_id (string): The credit card account ID
            user_id (string): The customer's unique identifier in the system
            new_credit_limit (integer): The new total credit limit in dollars (e.g., 7500 for $7,500)

        Returns:
            Credit limit increase approved and applied successfully.
        """
        if not credit_card_account_id or not user_id or new_credit_limit is None:
            return "Error: Missing required parameters."
        cards = self.db["credit_card_accounts"]["data"]
        if credit_card_account_id not in cards:
            return _NOT_FOUND.format(credit_card_account_id)
        card = cards[credit_card_account_id]
        if card.get("user_id") != user_id:
            return _NOT_OWNER.format(credit_card_account_id, user_id)
        ineligible = any(d.get("user_id") == user_id and d.get("status") in ("SUBMITTED", "UNDER_REVIEW", "PENDING")
                         for d in self.db["transaction_disputes"]["data"].values())
        if not ineligible:
            ineligible = any(o.get("credit_card_account_id") == credit_card_account_id
                             and o.get("status") in ("PENDING", "PROCESSING", "SHIPPED")
                             for o in self.db["credit_card_orders"]["data"].values())
        if not ineligible:
            ineligible = card.get("account_status", "").upper() in ("PAST_DUE", "DELINQUENT", "COLLECTIONS",
                                                                    "CLOSED")
        if ineligible:
            return "Error: Credit limit increase request cannot be approved at this time."
        current = _money(card.get("credit_limit", "$0.00"))
        new = float(new_credit_limit)
        card["credit_limit"] = f"${new:.2f}"
        request_id = cli_request_id(credit_card_account_id, user_id, new - current)
        add_to_db(self.db, "credit_limit_increase_requests", request_id,
                  {"request_id": request_id, "credit_card_account_id": credit_card_account_id, "user_id": user_id,
                   "previous_limit": f"${current:.2f}", "new_limit": f"${new:.2f}",
                   "increase_amount": f"${new - current:.2f}", "decision_date": TODAY_STR, "status": "APPROVED"})
        return (f"Credit limit increase approved!\n  - Account: {credit_card_account_id}\n"
                f"  - Previous Limit: ${current:.2f}\n  - New Limit: ${new:.2f}\n  - Increase: ${new - current:.2f}\n"
                f"  - Effective Date: {TODAY_STR}\nThe customer will receive a confirmation email.")

    @discoverable_tool("write")
    def deny_credit_limit_increase_5848(self, credit_card_account_id: str, user_id: str, denial_reason: str) -> str:
        """Deny a credit limit increase request for a customer's credit card.

        Args:
            credit_card_account_id (string): The credit card account ID
            user_id (string): The customer's unique identifier in the system
            denial_reason (string): The reason for denying the request. Must be one of: 'insufficient_account_age', 'cooldown_period_active', 'pending_disputes', 'pending_replacement_card', 'past_due_balance', 'high_utilization', 'insufficient_payment_history', 'requested_amount_exceeds_limit', 'other'

        Returns:
            Credit limit increase request denied.
        """
        if not credit_card_account_id or not user_id or not denial_reason:
            return "Error: Missing required parameters."
        reasons = ["insufficient_account_age", "cooldown_period_active", "pending_disputes",
                   "pending_replacement_card", "past_due_balance", "high_utilization",
                   "insufficient_payment_history", "requested_amount_exceeds_limit", "other"]
        if denial_reason not in reasons:
            return f"Error: Invalid denial_reason. Must be one of: {', '.join(reasons)}"
        if credit_card_account_id not in self.db["credit_card_accounts"]["data"]:
            return _NOT_FOUND.format(credit_card_account_id)
        request_id = cli_request_id(credit_card_account_id, user_id, 0.0)
        add_to_db(self.db, "credit_limit_increase_requests", request_id,
                  {"request_id": request_id, "credit_card_account_id": credit_card_account_id, "user_id": user_id,
                   "denial_reason": denial_reason, "decision_date": TODAY_STR, "status": "DENIED"})
        return (f"Credit limit increase request denied.\n  - Account: {credit_card_account_id}\n"
                f"  - Denial Reason: {denial_reason}\n  - Date: {TODAY_STR}\n"
                f"The customer will receive a notification explaining the denial.")
