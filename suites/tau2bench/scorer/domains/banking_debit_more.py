"""banking_knowledge's discoverable agent tools for debit cards in use: disputes (Regulation E), recurring blocks,
freezing, fraud alerts, PINs, listing, temporary limits (upstream 1.0.1 ``tools.py`` ``KnowledgeTools``; read there,
written here). The ATM tools (deposit images, temporary limits) are in :mod:`.banking_atm`."""

import json

from .banking_debit import pin_problem
from .banking_records import TODAY_STR, add_to_db, discoverable_tool, history, lookup, prefixed_id, title_words

class DebitCardUseTools:
    """Debit cards in use (a part of the agent's toolkit)."""

    @discoverable_tool("write")
    def file_debit_card_transaction_dispute_6281(
        self, transaction_id: str, account_id: str, card_id: str, user_id: str, dispute_category: str,
        transaction_date: str, discovery_date: str, disputed_amount: float, transaction_type: str,
        card_in_possession: bool, pin_compromised: str, contacted_merchant: bool, police_report_filed: bool,
        written_statement_provided: bool, provisional_credit_eligible: bool, customer_max_liability_amount: float,
        card_action: str,
    ) -> str:
        """File a formal dispute for a debit card transaction under Regulation E. Debit card disputes affect actual bank funds and have different liability rules based on reporting timing.

        Args:
            transaction_id (string): The unique identifier for the transaction being disputed
            account_id (string): The checking account ID linked to the debit card
            card_id (string): The debit card ID
            user_id (string): The user's unique identifier in the system
            dispute_category (string): Category of the dispute. Must be one of: 'unauthorized_transaction', 'atm_cash_discrepancy', 'atm_deposit_not_credited', 'duplicate_charge', 'incorrect_amount', 'goods_services_not_received', 'recurring_charge_after_cancellation', 'card_present_fraud', 'card_not_present_fraud'
            transaction_date (string): Date when the transaction occurred, format MM/DD/YYYY
            discovery_date (string): Date when the user first noticed the issue, format MM/DD/YYYY
            disputed_amount (number): The dollar amount being disputed
            transaction_type (string): Type of transaction. Must be one of: 'pin_purchase', 'signature_purchase', 'online_purchase', 'atm_withdrawal', 'atm_deposit', 'recurring_payment', 'person_to_person'
            card_in_possession (boolean): Whether the customer still has their physical debit card in their possession
            pin_compromised (string): Whether the customer's PIN may have been compromised. Must be one of: 'yes_shared', 'yes_observed', 'no', 'unknown'
            contacted_merchant (boolean): Whether the user attempted to resolve the issue with the merchant first
            police_report_filed (boolean): Whether a police report has been filed (recommended for fraud over $500)
            written_statement_provided (boolean): Whether the customer has provided a written statement describing what happened (required for Reg E provisional credit)
            provisional_credit_eligible (boolean): Whether the user is eligible for provisional credit based on Debit Card Provisional Credit Guidelines
            customer_max_liability_amount (number): The maximum dollar amount the customer could be liable for based on Regulation E reporting timing rules and the disputed amount. Use -1 for unlimited liability.
            card_action (string): Action to take on the card. Must be one of: 'keep_active', 'freeze_pending_investigation', 'close_and_reissue'

        Returns:
            Debit card transaction dispute filed successfully. A case has been opened and provisional credit determination has been recorded.
        """
        if not all([transaction_id, account_id, card_id, user_id, dispute_category, transaction_date, discovery_date,
                    disputed_amount, transaction_type, pin_compromised, card_action]):
            return "Error: Missing required parameters."
        if customer_max_liability_amount is None:
            return "Error: customer_max_liability_amount is required."
        if None in (card_in_possession, contacted_merchant, police_report_filed, written_statement_provided):
            return ("Error: card_in_possession, contacted_merchant, police_report_filed, and "
                    "written_statement_provided are required boolean fields.")
        categories = ["unauthorized_transaction", "atm_cash_discrepancy", "atm_deposit_not_credited",
                      "duplicate_charge", "incorrect_amount", "goods_services_not_received",
                      "recurring_charge_after_cancellation", "card_present_fraud", "card_not_present_fraud"]
        if dispute_category not in categories:
            return f"Error: Invalid dispute_category. Must be one of: {categories}"
        types = ["pin_purchase", "signature_purchase", "online_purchase", "atm_withdrawal", "atm_deposit",
                 "recurring_payment", "person_to_person"]
        if transaction_type not in types:
            return f"Error: Invalid transaction_type. Must be one of: {types}"
        pins = ["yes_shared", "yes_observed", "no", "unknown"]
        if pin_compromised not in pins:
            return f"Error: Invalid pin_compromised. Must be one of: {pins}"
        actions = ["keep_active", "freeze_pending_investigation", "close_and_reissue"]
        if card_action not in actions:
            return f"Error: Invalid card_action. Must be one of: {actions}"
        if disputed_amount <= 0:
            return "Error: disputed_amount must be a positive number."
        dispute_id = prefixed_id("dsp", f"dispute:{user_id}:{transaction_id}")
        fraud = dispute_category in ("unauthorized_transaction", "card_present_fraud", "card_not_present_fraud")
        shared = pin_compromised == "yes_shared"
        record = {"dispute_id": dispute_id, "transaction_id": transaction_id, "account_id": account_id,
                  "card_id": card_id, "user_id": user_id, "dispute_category": dispute_category,
                  "transaction_date": transaction_date, "discovery_date": discovery_date,
                  "disputed_amount": disputed_amount, "transaction_type": transaction_type,
                  "card_in_possession": card_in_possession, "pin_compromised": pin_compromised,
                  "contacted_merchant": contacted_merchant, "police_report_filed": police_report_filed,
                  "written_statement_provided": written_statement_provided,
                  "provisional_credit_eligible": provisional_credit_eligible,
                  "provisional_credit_issued": provisional_credit_eligible,
                  "provisional_credit_amount": disputed_amount if provisional_credit_eligible else None,
                  "customer_max_liability_amount": customer_max_liability_amount, "card_action": card_action,
                  "is_fraud_category": fraud, "pin_shared_voluntarily": shared, "submitted_at": TODAY_STR,
                  "status": "OPEN"}
        if not add_to_db(self.db, "debit_card_disputes", dispute_id, record):
            return "Error: Dispute may have already been filed for this transaction."
        parts = [f"Dispute ID: {dispute_id}", f"Transaction: {transaction_id}", f"Account: {account_id}",
                 f"Category: {title_words(dispute_category)}", f"Disputed Amount: ${disputed_amount:.2f}",
                 f"Card Action: {title_words(card_action)}"]
        parts.append(f"Provisional Credit: ISSUED - ${disputed_amount:.2f} credited within 10 business days per "
                     f"Regulation E." if provisional_credit_eligible else
                     "Provisional Credit: Not eligible - see Debit Card Provisional Credit Guidelines for details.")
        if shared:
            parts.append("WARNING: Customer indicated PIN was shared voluntarily. This may affect liability "
                         "determination.")
        if fraud and not police_report_filed and disputed_amount > 500:
            parts.append("RECOMMENDATION: For fraud disputes over $500, filing a police report is recommended.")
        return "\n".join(parts)

    @discoverable_tool("write")
    def set_debit_card_recurring_block_7382(self, card_id: str, block_recurring: bool) -> str:
        """Block or unblock all recurring payments on a debit card. When blocked, all recurring/subscription charges will be declined. One-time purchases are not affected.

        Args:
            card_id (string): The debit card ID to update
            block_recurring (boolean): True to block all recurring payments, False to unblock/allow recurring payments

        Returns:
            Debit card recurring payment settings updated successfully.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id"
        card = self.db["debit_cards"]["data"].get(card_id)
        if not card:
            return f"Error: Debit card '{card_id}' not found."
        status = card.get("status", "").upper()
        if status != "ACTIVE":
            return (f"Error: Cannot update recurring block settings for a card with status '{status}'. Card must be "
                    f"ACTIVE.")
        card["recurring_blocked"] = block_recurring
        if block_recurring:
            return (f"Recurring payments BLOCKED for debit card {card_id}.\nAll recurring/subscription charges will be "
                    f"declined.\nOne-time purchases are not affected.\nThis change takes effect within 24 hours.")
        return (f"Recurring payments UNBLOCKED for debit card {card_id}.\nRecurring/subscription charges will now be "
                f"allowed.\nThis change takes effect within 24 hours.")

    @discoverable_tool("read")
    def get_debit_dispute_status_7483(self, user_id: str) -> str:
        """Retrieve a user's debit card dispute history from the debit_card_disputes table. Returns all debit card disputes filed by the user, including dispute IDs, categories, amounts, statuses, and provisional credit information.

        Args:
            user_id (string): The user's unique identifier in the system

        Returns:
            Debit card dispute history retrieved successfully.
        """
        if not user_id:
            return "Error: Missing required parameter: user_id"
        return history("Debit card dispute history retrieved successfully.", "get_debit_dispute_status_7483",
                       f"Debit card dispute history for user {user_id}:",
                       lookup(self.db, "debit_card_disputes", "user_id", user_id),
                       "\nNo debit card disputes found for this user.")

    def _card(self, card_id):
        cards = self.db["debit_cards"]["data"]
        return cards.get(card_id) if card_id in cards else None

    @discoverable_tool("write")
    def freeze_debit_card_3892(self, card_id: str) -> str:
        """Temporarily freeze a debit card. The card can be unfrozen later.

        Args:
            card_id (string): The debit card ID to freeze

        Returns:
            Debit card frozen successfully.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        card = self._card(card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("status") == "FROZEN":
            return f"Error: Debit card '{card_id}' is already frozen."
        if card.get("status") != "ACTIVE":
            return (f"Error: Debit card '{card_id}' cannot be frozen. Current status: {card.get('status')}. Only "
                    f"ACTIVE cards can be frozen.")
        card["status"] = "FROZEN"
        card["frozen_date"] = TODAY_STR
        return "\n".join(["Debit Card Frozen Successfully", f"Card ID: {card_id}", "Status: FROZEN",
                          f"Frozen Date: {TODAY_STR}", "", "While frozen:",
                          "- All new purchase transactions will be declined",
                          "- Recurring payments and subscriptions will be declined",
                          "- Pending transactions already authorized may still process", "",
                          "To unfreeze, the customer can call customer service or use the mobile app.",
                          "If the card is confirmed lost or stolen, recommend closing the card permanently instead."])

    @discoverable_tool("write")
    def unfreeze_debit_card_3893(self, card_id: str) -> str:
        """Unfreeze a previously frozen debit card.

        Args:
            card_id (string): The debit card ID to unfreeze

        Returns:
            Debit card unfrozen successfully.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        card = self._card(card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("status") == "ACTIVE":
            return f"Error: Debit card '{card_id}' is already active."
        if card.get("status") != "FROZEN":
            return (f"Error: Debit card '{card_id}' cannot be unfrozen. Current status: {card.get('status')}. Only "
                    f"FROZEN cards can be unfrozen.")
        account_id = card.get("account_id")
        if account_id and account_id in self.db["accounts"]["data"]:
            if self.db["accounts"]["data"][account_id].get("status") != "OPEN":
                return (f"Error: The linked checking account '{account_id}' is no longer open. Card cannot be "
                        f"unfrozen.")
        card["status"] = "ACTIVE"
        card["unfrozen_date"] = TODAY_STR
        return "\n".join(["Debit Card Unfrozen Successfully", f"Card ID: {card_id}", "Status: ACTIVE",
                          f"Unfrozen Date: {TODAY_STR}", "", "The card is now active and ready to use immediately.",
                          "All transactions will process normally."])

    @discoverable_tool("write")
    def clear_debit_card_fraud_alert_4892(self, card_id: str, reason: str) -> str:
        """Clear a fraud alert or velocity block on a debit card.

        Args:
            card_id (string): The debit card ID to clear the alert/block for
            reason (string): Reason for clearing: 'customer_verified' (for fraud alerts after customer verification) or 'velocity_clear' (for velocity blocks after identity verification)

        Returns:
            Fraud alert/velocity block cleared successfully.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if not reason:
            return "Error: Missing required parameter: reason."
        reasons = ["customer_verified", "velocity_clear"]
        if reason not in reasons:
            return f"Error: Invalid reason '{reason}'. Must be one of: {', '.join(reasons)}"
        card = self._card(card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if reason == "velocity_clear":
            if not card.get("velocity_blocked", False):
                return f"Error: Debit card '{card_id}' does not have an active velocity block."
            card["velocity_blocked"] = False
            card["velocity_cleared_date"] = TODAY_STR
            return "\n".join(["Velocity Block Cleared Successfully", f"Card ID: {card_id}",
                              f"Cleared Date: {TODAY_STR}", "", "The card is now unblocked and ready for normal use.",
                              "The velocity monitoring will continue - if the same unusual patterns recur,",
                              "the card may be blocked again automatically."])
        if not card.get("fraud_alert_active", False):
            return f"Error: Debit card '{card_id}' does not have an active fraud alert."
        if card.get("alert_source") == "bank_initiated":
            return ("Error: BANK_INITIATED_ALERT - This fraud alert was initiated by the bank's fraud detection system "
                    "and cannot be cleared by customer service agents. Please transfer the customer to the security "
                    "team using transfer_to_human_agents.")
        card["fraud_alert_active"] = False
        card["alert_source"] = None
        card["fraud_alert_cleared_date"] = TODAY_STR
        return "\n".join(["Fraud Alert Cleared Successfully", f"Card ID: {card_id}", f"Cleared Date: {TODAY_STR}", "",
                          "The fraud alert has been removed from the card.", "All transactions will process normally.",
                          "", "Remind the customer to review recent transactions and report any unauthorized charges."])

    @discoverable_tool("write")
    def reset_debit_card_pin_6284(self, card_id: str, last_4_digits: str, new_pin: str) -> str:
        """Reset a debit card PIN when the customer has forgotten it.

        Args:
            card_id (string): The debit card ID to reset PIN for
            last_4_digits (string): Last 4 digits of the card number (for verification)
            new_pin (string): The new 4-digit PIN chosen by the customer

        Returns:
            Debit card PIN reset successfully.
        """
        if not all([card_id, last_4_digits, new_pin]):
            return "Error: Missing required parameters. Required: card_id, last_4_digits, new_pin."
        if not last_4_digits.isdigit() or len(last_4_digits) != 4:
            return "Error: Last 4 digits must be exactly 4 digits."
        problem = pin_problem(new_pin)
        if problem:
            return f"Error: {problem}"
        card = self._card(card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("last_4_digits") != last_4_digits:
            return "Error: Card verification failed. The last 4 digits do not match our records."
        if card.get("status") != "ACTIVE":
            return (f"Error: Cannot reset PIN. Card status is {card.get('status')}. Only ACTIVE cards can have their "
                    f"PIN reset.")
        card["pin_last_changed"] = TODAY_STR
        card["pin_locked"] = False
        card["pin_attempts_remaining"] = 3
        return "\n".join(["Debit Card PIN Reset Successfully", f"Card ID: {card_id}", f"PIN Changed: {TODAY_STR}", "",
                          "The new PIN is effective immediately.", "Your card has been unlocked and is ready to use.",
                          "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.", "",
                          "Security reminder: Never share your PIN with anyone."])

    @discoverable_tool("write")
    def change_debit_card_pin_6285(self, card_id: str, current_pin: str, new_pin: str) -> str:
        """Change a debit card PIN when the customer knows their current PIN.

        Args:
            card_id (string): The debit card ID to change PIN for
            current_pin (string): The customer's current 4-digit PIN
            new_pin (string): The new 4-digit PIN chosen by the customer

        Returns:
            Debit card PIN changed successfully.
        """
        if not all([card_id, current_pin, new_pin]):
            return "Error: Missing required parameters. Required: card_id, current_pin, new_pin."
        if not current_pin.isdigit() or len(current_pin) != 4:
            return "Error: Current PIN must be exactly 4 digits."
        problem = pin_problem(new_pin)
        if problem:
            return f"Error: {problem}"
        if current_pin == new_pin:
            return "Error: New PIN must be different from current PIN."
        card = self._card(card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("status") != "ACTIVE":
            return (f"Error: Cannot change PIN. Card status is {card.get('status')}. Only ACTIVE cards can have their "
                    f"PIN changed.")
        card["pin_last_changed"] = TODAY_STR
        return "\n".join(["Debit Card PIN Changed Successfully", f"Card ID: {card_id}", f"PIN Changed: {TODAY_STR}", "",
                          "The new PIN is effective immediately.",
                          "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.", "",
                          "Security reminder: Never share your PIN with anyone."])

    @discoverable_tool("read")
    def get_debit_cards_by_account_id_7823(self, account_id: str) -> str:
        """Retrieve all debit cards associated with a checking account. Returns card details including status, issue reason, and expiration date.

        Args:
            account_id (string): The checking account ID to retrieve debit cards for

        Returns:
            Debit cards retrieved successfully.
        """
        if not account_id:
            return "Error: Missing required parameter 'account_id'."
        accounts = self.db["accounts"]["data"]
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        if accounts[account_id].get("class", "").lower() not in ("checking", "business_checking"):
            return (f"Error: Account '{account_id}' is not a checking account. Debit cards are only available for "
                    f"checking accounts.")
        listed = []
        for card_id, card in self.db["debit_cards"]["data"].items():
            if card.get("account_id") != account_id:
                continue
            info = {"card_id": card_id}
            info.update(card)
            if "last_4_digits" in info and "card_number_last_4" not in info:
                info["card_number_last_4"] = info.pop("last_4_digits")
            if "issue_date" in info and "date_issued" not in info:
                info["date_issued"] = info.pop("issue_date")
            elif "created_date" in info and "date_issued" not in info:
                info["date_issued"] = info.pop("created_date")
            listed.append(info)
        if not listed:
            return f"No debit cards found for account '{account_id}'."
        listed.sort(key=lambda info: info.get("date_issued") or "", reverse=True)
        return json.dumps(listed, indent=2)
