"""banking_knowledge's discoverable agent tools for ordering, activating and closing debit cards (upstream 1.0.1
``tools.py`` ``KnowledgeTools`` and its ``_validate_pin`` / ``_validate_activation_common``; read there, written
here)."""

from .banking_records import TODAY_STR, add_to_db, deterministic_id, discoverable_tool, prefixed_id, title_words

_SEQUENTIAL = ("0123", "1234", "2345", "3456", "4567", "5678", "6789", "9876", "8765", "7654", "6543", "5432", "4321",
               "3210")
_ACTIVATOR = {"new_account": "activate_debit_card_8291", "first_card": "activate_debit_card_8291",
              "lost": "activate_debit_card_8292", "stolen": "activate_debit_card_8292",
              "fraud": "activate_debit_card_8292", "expired": "activate_debit_card_8293",
              "damaged": "activate_debit_card_8293", "upgrade": "activate_debit_card_8293",
              "bank_reissue": "activate_debit_card_8293"}
_ACTIVATE_ARGS = """
        Args:
            card_id (string): The debit card ID to activate
            last_4_digits (string): Last 4 digits of the card number (for verification)
            expiration_date (string): Card expiration date in MM/YY format
            cvv (string): 3-digit CVV from the back of the card
            pin (string): 4-digit PIN chosen by the customer
"""


def pin_problem(pin) -> str | None:
    if not pin or not pin.isdigit() or len(pin) != 4:
        return "PIN must be exactly 4 digits."
    if pin in _SEQUENTIAL:
        return "PIN cannot be sequential (e.g., 1234). Please choose a more secure PIN."
    if len(set(pin)) == 1:
        return "PIN cannot be all the same digit (e.g., 1111). Please choose a more secure PIN."
    return None


def _activation_problem(db: dict, card_id, last_4_digits, expiration_date, cvv, pin, allowed, tool):
    if not all([card_id, last_4_digits, expiration_date, cvv, pin]):
        return ("Error: Missing required parameters. Required: card_id, last_4_digits, expiration_date, cvv, pin.",
                None)
    problem = pin_problem(pin)
    if problem:
        return f"Error: {problem}", None
    if not cvv.isdigit() or len(cvv) != 3:
        return "Error: CVV must be exactly 3 digits.", None
    if not last_4_digits.isdigit() or len(last_4_digits) != 4:
        return "Error: Last 4 digits must be exactly 4 digits.", None
    cards = db["debit_cards"]["data"]
    if card_id not in cards:
        return f"Error: Debit card '{card_id}' not found.", None
    card = cards[card_id]
    reason = card.get("issue_reason", "new_account")
    if reason not in allowed:
        return (f"Error: Wrong activation tool. This card has issue_reason='{reason}'. Please use "
                f"{_ACTIVATOR.get(reason, 'unknown')} instead of {tool}.", None)
    if card.get("status") == "ACTIVE":
        return f"Error: Debit card '{card_id}' is already active.", None
    if card.get("status") != "PENDING":
        return (f"Error: Debit card '{card_id}' cannot be activated. Current status: {card.get('status')}. Only "
                f"PENDING cards can be activated.", None)
    if card.get("last_4_digits") != last_4_digits:
        return "Error: Card verification failed. The last 4 digits do not match our records.", None
    account_id = card.get("account_id")
    if account_id and account_id in db["accounts"]["data"]:
        if db["accounts"]["data"][account_id].get("status") != "OPEN":
            return (f"Error: The linked checking account '{account_id}' is no longer open. Card cannot be "
                    f"activated.", None)
    return None, card


def _others(db: dict, card_id: str, account_id) -> list[tuple[str, dict]]:
    return [(other_id, other) for other_id, other in db["debit_cards"]["data"].items()
            if other_id != card_id and other.get("account_id") == account_id and other.get("status") == "ACTIVE"]


def _with_args(function):
    """The activation tools' docstrings share their ``Args`` block (inserted after the first paragraph)."""
    head, tail = function.__doc__.split("\n\n", 1)
    function.__doc__ = head + "\n" + _ACTIVATE_ARGS + "\n" + tail
    return function


class DebitCardTools:
    """Ordering, activating and closing debit cards (a part of the agent's toolkit)."""

    @discoverable_tool("write")
    def order_debit_card_5739(self, account_id: str, user_id: str, delivery_option: str, delivery_fee: float,
                              card_design: str, design_fee: float, shipping_address: str,
                              excess_replacement_fee: float | None = None) -> str:
        """Order a new debit card for a customer's checking account.

        Args:
            account_id (string): The checking account ID to link the debit card to
            user_id (string): The customer's unique identifier
            delivery_option (string): Shipping speed: STANDARD, EXPEDITED, or RUSH
            delivery_fee (number): Fee to charge for delivery in dollars
            card_design (string): Card design: CLASSIC, PREMIUM, or CUSTOM
            design_fee (number): Fee to charge for card design in dollars
            shipping_address (string): Full shipping address for card delivery
            excess_replacement_fee (number, optional): Fee for exceeding replacement limit, if applicable

        Returns:
            Debit card order placed successfully.
        """
        excess = excess_replacement_fee or 0
        try:
            delivery_fee = float(delivery_fee) if delivery_fee is not None else None
        except (TypeError, ValueError):
            return "Error: delivery_fee must be a number."
        try:
            design_fee = float(design_fee) if design_fee is not None else None
        except (TypeError, ValueError):
            return "Error: design_fee must be a number."
        try:
            excess = float(excess)
        except (TypeError, ValueError):
            excess = 0
        if not all([account_id, user_id, delivery_option, delivery_fee is not None, card_design,
                    design_fee is not None, shipping_address]):
            return ("Error: Missing required parameters. Required: account_id, user_id, delivery_option, "
                    "delivery_fee, card_design, design_fee, shipping_address.")
        deliveries = ["STANDARD", "EXPEDITED", "RUSH"]
        if delivery_option.upper() not in deliveries:
            return f"Error: Invalid delivery_option. Must be one of: {deliveries}"
        delivery_option = delivery_option.upper()
        designs = ["CLASSIC", "PREMIUM", "CUSTOM"]
        if card_design.upper() not in designs:
            return f"Error: Invalid card_design. Must be one of: {designs}"
        card_design = card_design.upper()
        accounts = self.db["accounts"]["data"]
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("class") != "checking":
            return (f"Error: Debit cards can only be ordered for checking accounts. Account '{account_id}' is a "
                    f"{account.get('class')} account.")
        if account.get("status") != "OPEN":
            return f"Error: Account must be OPEN. Account '{account_id}' has status: {account.get('status')}"
        if account.get("user_id") != user_id:
            return f"Error: Account '{account_id}' does not belong to user '{user_id}'."
        try:
            holdings = float(str(account.get("current_holdings", "0")).replace(",", ""))
        except ValueError:
            holdings = 0.0
        if holdings < 25.0:
            return f"Error: Account must have a minimum balance of $25. Current balance: ${holdings:.2f}"
        for order in self.db["debit_card_orders"]["data"].values():
            if order.get("account_id") == account_id and order.get("status") == "PENDING":
                return f"Error: There is already a pending debit card order for account '{account_id}'."
        cards = self.db["debit_cards"]["data"]
        if sum(1 for c in cards.values() if c.get("account_id") == account_id and c.get("status") == "ACTIVE") >= 1:
            return (f"Error: Account '{account_id}' already has an active debit card. Maximum 1 active card per "
                    f"checking account.")
        total = delivery_fee + design_fee + excess
        if total > 0 and holdings < total:
            return (f"Error: Insufficient funds for fees. Total fees: ${total:.2f}. Current balance: "
                    f"${holdings:.2f}")
        expected = {"STANDARD": "7-10 business days", "EXPEDITED": "3-5 business days",
                    "RUSH": "1-2 business days"}[delivery_option]
        order_id = prefixed_id("dcord", f"debit_card_order:{account_id}:{user_id}:{delivery_option}")
        order = {"order_id": order_id, "account_id": account_id, "user_id": user_id,
                 "delivery_option": delivery_option, "card_design": card_design, "shipping_address": shipping_address,
                 "delivery_fee": delivery_fee, "design_fee": design_fee, "excess_replacement_fee": excess,
                 "total_fee": total, "order_date": TODAY_STR, "expected_delivery": expected, "status": "PENDING"}
        if not add_to_db(self.db, "debit_card_orders", order_id, order):
            return "Error: Failed to create debit card order. Order may already exist."
        if total > 0:
            accounts[account_id]["current_holdings"] = f"{holdings - total:.2f}"
            fees = ([f"Delivery ${delivery_fee}"] if delivery_fee > 0 else []) + (
                [f"Design ${design_fee}"] if design_fee > 0 else []) + (
                [f"Excess Replacement ${excess:.0f}"] if excess > 0 else [])
            fee_id = f"btxn_dcfee_{order_id[-8:]}"
            add_to_db(self.db, "bank_account_transaction_history", fee_id,
                      {"transaction_id": fee_id, "account_id": account_id, "date": TODAY_STR,
                       "description": f"DEBIT CARD ORDER FEE - {', '.join(fees)}", "amount": -total,
                       "type": "debit_card_fee", "status": "posted"})
        card_id = prefixed_id("dbc", f"debit_card:{account_id}:{user_id}:{TODAY_STR}")
        last4 = "".join(c for c in deterministic_id(f"card_details:{card_id}:last4", length=8) if c.isdigit())
        cvv = "".join(c for c in deterministic_id(f"card_details:{card_id}:cvv", length=6) if c.isdigit())
        holder = "CARDHOLDER"
        if user_id in self.db["users"]["data"]:
            holder = self.db["users"]["data"][user_id].get("name", "CARDHOLDER").upper()
        month, _, year = TODAY_STR.split("/")
        day = "31" if month in ("01", "03", "05", "07", "08", "10", "12") else "28" if month == "02" else "30"
        existing = [c for c in cards.values() if c.get("account_id") == account_id]
        closed = next((c for c in existing if c.get("status") == "CLOSED"), None)
        if closed:
            why = closed.get("closure_reason", "first_card")
            reason = ("fraud" if why == "fraud_suspected" else why) if why in ("lost", "stolen", "fraud",
                                                                               "fraud_suspected") else "first_card"
        else:
            reason = "first_card" if existing else "new_account"
        add_to_db(self.db, "debit_cards", card_id,
                  {"card_id": card_id, "account_id": account_id, "user_id": user_id, "cardholder_name": holder,
                   "last_4_digits": last4[:4].zfill(4), "cvv": cvv[:3].zfill(3), "status": "PENDING",
                   "issue_date": TODAY_STR, "expiration_date": f"{month}/{day}/{int(year) + 4}",
                   "card_design": card_design, "issue_reason": reason})
        parts = ["Debit Card Order Confirmed", f"Order ID: {order_id}", f"Card ID: {card_id}",
                 f"Linked Account: {account_id}", f"Delivery Option: {delivery_option}", f"Card Design: {card_design}",
                 f"Shipping Address: {shipping_address}", f"Expected Delivery: {expected}", "",
                 "Note: Card will arrive with status PENDING. Customer must call to activate after receiving the card."]
        if total > 0:
            details = ([f"Delivery: ${delivery_fee}"] if delivery_fee > 0 else []) + (
                [f"Design: ${design_fee}"] if design_fee > 0 else []) + (
                [f"Excess Replacement: ${excess:.0f}"] if excess > 0 else [])
            parts.append(f"Total Fees: ${total:.2f} ({', '.join(details)}) - CHARGED to account {account_id}")
            parts.append(f"New Account Balance: ${holdings - total:.2f}")
        else:
            parts.append("Total Fees: $0 (No additional charges)")
        return "\n".join(parts)

    @discoverable_tool("write")
    @_with_args
    def activate_debit_card_8291(self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str,
                                 pin: str) -> str:
        """Activate a NEW debit card for a customer. Use ONLY for first-time cards on a checking account (issue_reason = 'new_account' or 'first_card'). For replacement or reissued cards, use the appropriate variant.

        Returns:
            New debit card activated successfully.
        """
        error, card = _activation_problem(self.db, card_id, last_4_digits, expiration_date, cvv, pin,
                                          ("new_account", "first_card"), "activate_debit_card_8291")
        if error:
            return error
        card["status"] = "ACTIVE"
        card["activated_date"] = TODAY_STR
        gone = []
        for other_id, other in _others(self.db, card_id, card.get("account_id")):
            other.update(status="DEACTIVATED", deactivated_date=TODAY_STR, deactivation_reason="New card activated")
            gone.append(other_id)
        parts = ["New Debit Card Activation Successful", f"Card ID: {card_id}", "Status: ACTIVE",
                 f"Activation Date: {TODAY_STR}", "",
                 "Your card is now ready to use at any ATM or point of sale terminal.",
                 "For security, please sign the back of your card."]
        if gone:
            parts.append(f"\nNote: Previous card(s) have been deactivated: {', '.join(gone)}")
        return "\n".join(parts)

    @discoverable_tool("write")
    @_with_args
    def activate_debit_card_8292(self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str,
                                 pin: str) -> str:
        """Activate a REPLACEMENT debit card. Use ONLY for cards replacing lost, stolen, or fraud-suspected cards (issue_reason = 'lost', 'stolen', or 'fraud'). For new or reissued cards, use the appropriate variant.

        Returns:
            Replacement debit card activated successfully.
        """
        error, card = _activation_problem(self.db, card_id, last_4_digits, expiration_date, cvv, pin,
                                          ("lost", "stolen", "fraud"), "activate_debit_card_8292")
        if error:
            return error
        reason = card.get("issue_reason", "lost")
        card["status"] = "ACTIVE"
        card["activated_date"] = TODAY_STR
        gone = []
        for other_id, other in _others(self.db, card_id, card.get("account_id")):
            other.update(status="DEACTIVATED", deactivated_date=TODAY_STR,
                         deactivation_reason=f"Replacement card activated ({reason})")
            gone.append(other_id)
        parts = ["Replacement Debit Card Activation Successful", f"Card ID: {card_id}",
                 f"Replacement Reason: {title_words(reason)}", "Status: ACTIVE", f"Activation Date: {TODAY_STR}", "",
                 "Your replacement card is now ready to use.", "", "IMPORTANT SECURITY REMINDERS:",
                 "- Please review your recent transactions for any unauthorized charges",
                 "- Report any suspicious activity immediately"]
        if reason == "fraud":
            parts.append("- Since fraud was suspected, we recommend changing your online banking password")
        if gone:
            parts.append(f"\nPrevious card(s) have been deactivated for security: {', '.join(gone)}")
        return "\n".join(parts)

    @discoverable_tool("write")
    @_with_args
    def activate_debit_card_8293(self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str,
                                 pin: str) -> str:
        """Activate a REISSUED debit card. Use ONLY for cards reissued due to expiration, damage, design upgrade, or bank-initiated replacement (issue_reason = 'expired', 'damaged', 'upgrade', or 'bank_reissue'). For new or replacement cards, use the appropriate variant.

        Returns:
            Reissued debit card activated successfully.
        """
        error, card = _activation_problem(self.db, card_id, last_4_digits, expiration_date, cvv, pin,
                                          ("expired", "damaged", "upgrade", "bank_reissue"),
                                          "activate_debit_card_8293")
        if error:
            return error
        reason = card.get("issue_reason", "expired")
        card["status"] = "ACTIVE"
        card["activated_date"] = TODAY_STR
        grace = []
        for other_id, other in _others(self.db, card_id, card.get("account_id")):
            other.update(status="GRACE_PERIOD", grace_period_ends=TODAY_STR,
                         deactivation_reason=f"Reissued card activated ({reason})")
            grace.append(other_id)
        parts = ["Reissued Debit Card Activation Successful", f"Card ID: {card_id}",
                 f"Reissue Reason: {title_words(reason)}", "Status: ACTIVE", f"Activation Date: {TODAY_STR}", "",
                 "Your reissued card is now ready to use."]
        if grace:
            parts.append(f"\nNote: Your previous card(s) ({', '.join(grace)}) will remain active for 24 hours as a "
                         f"grace period.")
            parts.append("After 24 hours, the old card(s) will be automatically deactivated.")
        if reason in ("expired", "bank_reissue"):
            parts.append("\nReminder: If your card number changed, please update any recurring payments with your new "
                         "card details.")
        return "\n".join(parts)

    @discoverable_tool("write")
    def close_debit_card_4721(self, card_id: str, reason: str) -> str:
        """Close or cancel a debit card permanently.

        Args:
            card_id (string): The debit card ID to close
            reason (string): Reason for closing: lost, stolen, fraud_suspected, damaged, no_longer_needed, or account_closing

        Returns:
            Debit card closed successfully.
        """
        if not card_id or not reason:
            return "Error: Missing required parameters. Required: card_id, reason."
        reasons = ["lost", "stolen", "fraud_suspected", "damaged", "no_longer_needed", "account_closing"]
        if reason.lower() not in reasons:
            return f"Error: Invalid reason. Must be one of: {reasons}"
        reason = reason.lower()
        cards = self.db["debit_cards"]["data"]
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("status") not in ("ACTIVE", "PENDING"):
            return (f"Error: Debit card '{card_id}' cannot be closed. Current status: {card.get('status')}. Only "
                    f"ACTIVE or PENDING cards can be closed.")
        previous = card.get("status")
        card["status"] = "CLOSED"
        card["closed_date"] = TODAY_STR
        card["closure_reason"] = reason
        parts = ["Debit Card Closed Successfully", f"Card ID: {card_id}", f"Previous Status: {previous}",
                 "New Status: CLOSED", f"Closure Reason: {title_words(reason)}", f"Closure Date: {TODAY_STR}", ""]
        if reason in ("lost", "stolen", "fraud_suspected"):
            parts += ["IMPORTANT: This card has been immediately deactivated for security.",
                      "Any pending transactions may still be processed."]
            if reason == "fraud_suspected":
                parts += ["Please advise the customer to review recent transactions and file disputes for any "
                          "unauthorized charges.", "Also recommend changing their online banking password."]
        parts += ["", "Note: This card cannot be reactivated. If the customer needs a new card, they can order one "
                  "through the standard ordering process.",
                  "Any recurring payments linked to this card will need to be updated with new payment information."]
        return "\n".join(parts)
