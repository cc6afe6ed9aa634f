"""banking_knowledge's ATM tools (upstream 1.0.1 ``tools.py``; read there, written here):
``get_atm_deposit_images_8473`` (the scanned envelopes upstream holds for three deposits, and the text for any other
Rho-Bank ATM deposit) and ``request_temporary_debit_card_limit_increase_8374``."""

import datetime

from .banking_records import TODAY_STR, discoverable_tool

_DEFAULT_ATM = {"blue account": 500, "green account": 600, "light blue account": 400, "green fee-free account": 500,
                "evergreen account": 750, "bluest account": 1500, "dark green account": 300,
                "gold years account": 600, "purple account": 1000}

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


class AtmTools:
    """ATM deposit images and temporary card limits (a part of the agent's toolkit)."""

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

    @discoverable_tool("write")
    def request_temporary_debit_card_limit_increase_8374(self, card_id: str, limit_type: str, new_limit: int) -> str:
        """Request a temporary 24-hour increase to a debit card's daily ATM or purchase limit.

        Args:
            card_id (string): The debit card ID to increase limits for
            limit_type (string): Type of limit to increase: 'atm' for daily ATM withdrawal limit, 'purchase' for daily purchase limit
            new_limit (integer): The requested new temporary limit amount in dollars

        Returns:
            Temporary limit increase granted successfully.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if not limit_type:
            return "Error: Missing required parameter: limit_type."
        if limit_type not in ["atm", "purchase"]:
            return f"Error: Invalid limit_type '{limit_type}'. Must be 'atm' or 'purchase'."
        if new_limit is None:
            return "Error: Missing required parameter: new_limit."
        try:
            new_limit = float(new_limit)
        except (ValueError, TypeError):
            return f"Error: new_limit must be an integer, got '{new_limit}'."
        if not new_limit.is_integer():
            return f"Error: new_limit must be an integer, got '{new_limit}'."
        new_limit = int(new_limit)
        if new_limit <= 0:
            return "Error: new_limit must be a positive amount."
        cards = self.db["debit_cards"]["data"]
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("status") != "ACTIVE":
            return (f"Error: Debit card '{card_id}' is not active. Current status: {card.get('status')}. Only ACTIVE "
                    f"cards can have limit increases.")
        account_id = card.get("account_id")
        if not account_id or account_id not in self.db["accounts"]["data"]:
            return f"Error: Could not find linked account for debit card '{card_id}'."
        account = self.db["accounts"]["data"][account_id]
        if account.get("status") != "OPEN":
            return (f"Error: The linked account '{account_id}' is not in good standing. Account status: "
                    f"{account.get('status')}.")
        opened = account.get("date_opened")
        if opened:
            try:
                age = (datetime.datetime.strptime(TODAY_STR, "%m/%d/%Y")
                       - datetime.datetime.strptime(opened, "%m/%d/%Y")).days
                if age < 60:
                    return (f"Error: Account must be at least 60 days old for a temporary limit increase. Account "
                            f"age: {age} days.")
            except ValueError:
                pass
        if limit_type == "atm":
            current, field, name = card.get("daily_atm_limit"), "daily_atm_limit", "Daily ATM Withdrawal Limit"
            if current is None:
                level = account.get("level", "").lower()
                if "light green" in level:
                    return ("Error: Light Green Account (teen checking) cards have policy-based limits that cannot be "
                            "modified. The daily ATM withdrawal limit of $150 is fixed by account policy for safety "
                            "reasons. The customer may request the parent/guardian to withdraw cash from their own "
                            "account if needed.")
                current = _DEFAULT_ATM.get(level)
                if current is None:
                    return (f"Error: Could not determine the default ATM limit for account type "
                            f"'{account.get('level')}'. Please verify the account type.")
        else:
            current, field, name = card.get("daily_purchase_limit"), "daily_purchase_limit", "Daily Purchase Limit"
        if current is None:
            return (f"Error: The card does not have a {name.lower()} configured. This may be a restricted account type "
                    f"where limits are set by account policy and cannot be modified.")
        most = int(current * 1.5)
        if new_limit > most:
            return (f"Error: Requested limit ${new_limit} exceeds the maximum allowed temporary increase. Maximum "
                    f"temporary limit is ${most} (150% of current ${current} limit).")
        if new_limit <= current:
            return f"Error: Requested limit ${new_limit} is not higher than the current limit of ${current}."
        card[field] = new_limit
        card[f"temporary_{limit_type}_limit_increase"] = True
        card[f"original_{limit_type}_limit"] = current
        card[f"temporary_{limit_type}_limit_expires"] = TODAY_STR
        return "\n".join([f"Temporary {name} Increase Granted Successfully", f"Card ID: {card_id}",
                          f"Previous Limit: ${current}", f"New Temporary Limit: ${new_limit}",
                          f"Increase Amount: ${new_limit - current}", "", "Important Information:",
                          "- This temporary increase expires in 24 hours",
                          f"- After expiration, the limit will revert to ${current}",
                          "- Only one temporary increase is allowed per 24-hour period", "",
                          "Note: If the customer is at a third-party (non-Rho-Bank) ATM, that ATM may have its own",
                          "per-transaction or daily limits that Rho-Bank cannot override. The customer may need to",
                          "use a Rho-Bank ATM or make multiple smaller withdrawals at third-party ATMs."])
