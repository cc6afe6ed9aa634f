"""banking_knowledge's discoverable agent tools for bank accounts (upstream 1.0.1 ``tools.py`` ``KnowledgeTools``:
opening, closing, transfers, credits, interest reports, transactions; read there, written here)."""

import datetime

from .banking_records import (NOW, TODAY_STR, account_balance, add_to_db, deterministic_id, discoverable_tool,
                              found, lookup, parse_balance, query_db)

_NOT_MET = "Error: Account eligibility requirements not met."
#: the early-closure fee and its window (days) by account level: personal checking, personal savings
_CHECKING_EARLY = {"Light Blue Account": (15, 30), "Light Green Account": (15, 30),
                   "Green Fee-Free Account": (15, 30), "Blue Account": (25, 60), "Green Account": (25, 60),
                   "Evergreen Account": (50, 90), "Bluest Account": (100, 180)}
_SAVINGS_EARLY = {"Bronze Account": (20, 60), "Silver Account": (35, 90), "Silver Plus Account": (35, 90),
                  "Gold Account": (75, 180), "Gold Plus Account": (75, 180), "Gold Years Account": (75, 180),
                  "Platinum Account": (150, 270), "Platinum Plus Account": (150, 270),
                  "Diamond Elite Account": (150, 270)}


def _age_days(account: dict) -> int:
    try:
        return (NOW - datetime.datetime.strptime(account.get("date_opened", ""), "%m/%d/%Y")).days
    except ValueError:
        return 0


def _kind(account: dict):
    return account.get("account_type", account.get("class", ""))


def _txn_date(item) -> datetime.datetime:
    text = str(item[1].get("date", ""))
    for form in ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y"):
        try:
            return datetime.datetime.strptime(text, form)
        except ValueError:
            continue
    return datetime.datetime.min


class AccountTools:
    """Bank-account discoverable tools (a part of the agent's toolkit)."""

    @discoverable_tool("write")
    def open_bank_account_4821(self, user_id: str, account_type: str, account_class: str) -> str:
        """Open a new bank account for a customer.

        Args:
            user_id (string): The customer's unique identifier in the system
            account_type (string): Type of account to open. Must be one of: 'checking' (personal checking), 'savings' (personal savings), 'business_checking', 'business_savings'
            account_class (string): The full official account class name

        Returns:
            Bank account opened successfully.
        """
        if not user_id or not account_type or not account_class:
            return "Error: Missing required parameters."
        types = ["checking", "savings", "business_checking", "business_savings"]
        if account_type not in types:
            return f"Error: Invalid account_type. Must be one of: {types}"
        mine = [account for account in self.db["accounts"]["data"].values() if account.get("user_id") == user_id]
        personal = ("checking", "personal_checking")
        if account_type == "savings":
            if not any(_kind(a) in personal and a.get("status", "") in ("OPEN", "ACTIVE") and _age_days(a) >= 14
                       for a in mine):
                return _NOT_MET
        if account_type == "business_checking":
            if any(a.get("status") == "CLOSED" for a in mine):
                return _NOT_MET
            if not any(_kind(a) in personal and a.get("status", "") in ("OPEN", "ACTIVE") for a in mine):
                return _NOT_MET
        if account_type == "business_savings":
            for account in mine:
                if parse_balance(account.get("current_holdings", account.get("balance", 0))) < 0:
                    return _NOT_MET
            if not any(_kind(a) == "business_checking" and a.get("status", "") in ("OPEN", "ACTIVE")
                       and _age_days(a) >= 30 for a in mine):
                return _NOT_MET
        account_id = deterministic_id(f"account:{user_id}:{account_type}:{account_class}")
        record = {"account_id": account_id, "user_id": user_id, "account_type": account_type,
                  "account_class": account_class, "current_holdings": "0.00", "status": "OPEN",
                  "date_opened": TODAY_STR}
        if not add_to_db(self.db, "accounts", account_id, record):
            return f"Failed to open account: Account ID '{account_id}' may already exist."
        return (f"Bank account opened successfully!\n  - Account ID: {account_id}\n  - User ID: {user_id}\n"
                f"  - Account Type: {account_type}\n  - Account Class: {account_class}\n  - Status: OPEN\n"
                f"  - Initial Balance: $0.00\n  - Date Opened: {TODAY_STR}")

    @discoverable_tool("write")
    def close_bank_account_7392(self, account_id: str, reason: str = "Customer requested closure",
                                waive_early_closure_fee: bool = False) -> str:
        """Close a customer's bank account (checking or savings).

        Args:
            account_id (string): The ID of the bank account to close
            reason (string, optional): The reason for closing the account
            waive_early_closure_fee (boolean, optional): Whether to waive early closure fees

        Returns:
            Bank account closed successfully.
        """
        if not account_id:
            return "Error: Missing required parameter (account_id)."
        accounts = self.db["accounts"]["data"]
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("status") == "CLOSED":
            return f"Error: Account '{account_id}' is already closed."
        balance = account_balance(account)
        fee = 0.0
        if not waive_early_closure_fee:
            level, kind, opened = account.get("level", ""), account.get("class", ""), account.get("date_opened", "")
            rule = None
            if kind == "checking":
                rule = _CHECKING_EARLY.get(level)
            elif kind == "savings":
                rule = _SAVINGS_EARLY.get(level)
            if rule and opened:
                try:
                    age = (NOW - datetime.datetime.strptime(opened, "%m/%d/%Y")).days
                    if age < rule[1]:
                        if balance < rule[0]:
                            return "Error: Account unable to be closed."
                        fee = rule[0]
                except ValueError:
                    pass
        if balance - fee != 0:
            return f"Error: Account balance must be $0.00 before closing. Current balance: ${balance:.2f}"
        account["status"] = "CLOSED"
        account["date_closed"] = TODAY_STR
        account["closure_reason"] = reason
        account["early_closure_fee_waived"] = waive_early_closure_fee
        return (f"Bank account closed successfully!\n  - Account ID: {account_id}\n"
                f"  - Account Type: {account.get('account_type', 'N/A')}\n"
                f"  - Account Class: {account.get('account_class', 'N/A')}\n  - Status: CLOSED\n"
                f"  - Date Closed: {TODAY_STR}\n  - Reason: {reason}\n"
                f"  - Early Closure Fee Waived: {'Yes' if waive_early_closure_fee else 'No'}")

    @discoverable_tool("read")
    def get_all_user_accounts_by_user_id_3847(self, user_id: str) -> str:
        """Retrieve all accounts (checking, savings, credit cards) for a customer.

        Args:
            user_id (string): The customer's unique identifier in the system

        Returns:
            User accounts retrieved successfully.
        """
        if not user_id:
            return "Error: Missing required parameter: user_id"
        banks = lookup(self.db, "accounts", "user_id", user_id)
        cards = lookup(self.db, "credit_card_accounts", "user_id", user_id)
        return "\n".join(["User accounts retrieved successfully.", "",
                          "Executed: get_all_user_accounts_by_user_id_3847",
                          f"Accounts for user {user_id}:", "", "Bank Accounts:",
                          banks if found(banks) else "  No bank accounts found.", "\nCredit Card Accounts:",
                          cards if found(cards) else "  No credit card accounts found."])

    @discoverable_tool("write")
    def transfer_funds_between_bank_accounts_7291(self, source_account_id: str, destination_account_id: str,
                                                  amount: float) -> str:
        """Transfer funds from one bank account to another.

        Args:
            source_account_id (string): The account ID to transfer funds from
            destination_account_id (string): The account ID to transfer funds to
            amount (number): The amount to transfer in USD

        Returns:
            Funds transferred successfully.
        """
        if not source_account_id or not destination_account_id or amount is None:
            return "Error: Missing required parameters (source_account_id, destination_account_id, amount)."
        try:
            amount = float(amount)
        except (ValueError, TypeError):
            return f"Error: Invalid amount '{amount}'. Must be a number."
        if amount <= 0:
            return "Error: Transfer amount must be positive."
        if source_account_id == destination_account_id:
            return "Error: Source and destination accounts cannot be the same."
        accounts = self.db["accounts"]["data"]
        if source_account_id not in accounts:
            return f"Error: Source account '{source_account_id}' not found."
        if destination_account_id not in accounts:
            return f"Error: Destination account '{destination_account_id}' not found."
        source, dest = accounts[source_account_id], accounts[destination_account_id]
        if source.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Source account '{source_account_id}' is not active."
        if dest.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Destination account '{destination_account_id}' is not active."
        have = account_balance(source)
        if have < amount:
            return (f"Error: Insufficient funds. Source account balance is ${have:.2f}, but transfer amount is "
                    f"${amount:.2f}.")
        new_source, new_dest = have - amount, account_balance(dest) + amount
        source["current_holdings"] = f"${new_source:.2f}"
        dest["current_holdings"] = f"${new_dest:.2f}"
        return (f"Transfer completed successfully!\n  - Amount: ${amount:.2f}\n"
                f"  - From: {source_account_id} (new balance: ${new_source:.2f})\n"
                f"  - To: {destination_account_id} (new balance: ${new_dest:.2f})")

    def _credit(self, account_id, amount, credit_type, types, classes, not_kind, seed, dollar, descriptions):
        if not account_id or amount is None or not credit_type:
            return "Error: Missing required parameters."
        try:
            amount = float(amount)
        except (TypeError, ValueError):
            return "Error: Invalid credit amount. Must be a number."
        if amount <= 0:
            return "Error: Credit amount must be positive."
        if credit_type not in types:
            return f"Error: Invalid credit_type. Must be one of: {types}"
        accounts = self.db["accounts"]["data"]
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("class", "").lower() not in classes:
            return f"Error: Account '{account_id}' is not a {not_kind}"
        if account.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Account '{account_id}' is not active."
        before = account_balance(account)
        after = before + amount
        account["current_holdings"] = f"{dollar}{after:.2f}"
        txn = f"txn_{deterministic_id(f'{seed}:{account_id}:{credit_type}:{amount}:{TODAY_STR}')}"
        self.db["bank_account_transaction_history"]["data"][txn] = {
            "transaction_id": txn, "account_id": account_id, "date": TODAY_STR,
            "description": descriptions[credit_type], "amount": amount, "type": credit_type, "status": "posted"}
        return (f"\nCredit applied successfully!\n  - Transaction ID: {txn}\n  - Account: {account_id}\n"
                f"  - Credit Type: {credit_type}\n  - Amount: ${amount:.2f}\n  - Previous Balance: ${before:.2f}\n"
                f"  - New Balance: ${after:.2f}")

    @discoverable_tool("write")
    def apply_checking_account_credit_5829(self, account_id: str, amount: float, credit_type: str) -> str:
        """Apply a credit to a customer's checking account.

        Args:
            account_id (string): The checking account ID to credit
            amount (number): The positive dollar amount to credit (must be greater than 0)
            credit_type (string): The type of credit: 'rebate_credit' for missing rebates, 'fee_refund' for incorrect fee charges

        Returns:
            Credit applied to checking account successfully.
        """
        return self._credit(account_id, amount, credit_type, ["rebate_credit", "fee_refund"], ("checking",),
                            "checking account. Credits can only be applied to checking accounts.",
                            "checking_credit", "$", {"rebate_credit": "REBATE CREDIT - CUSTOMER SERVICE",
                                                     "fee_refund": "FEE REFUND - CUSTOMER SERVICE"})

    @discoverable_tool("write")
    def apply_savings_account_credit_6831(self, account_id: str, amount: float, credit_type: str) -> str:
        """Apply a credit to a customer's savings account for interest corrections, fee refunds, or goodwill adjustments.

        Args:
            account_id (string): The savings account ID to credit
            amount (number): The positive dollar amount to credit (must be greater than 0)
            credit_type (string): The type of credit: 'interest_correction' for APY/interest calculation errors, 'fee_refund' for incorrect fee charges, 'goodwill_credit' for customer service gestures

        Returns:
            Credit applied to savings account successfully.
        """
        return self._credit(account_id, amount, credit_type, ["interest_correction", "fee_refund", "goodwill_credit"],
                            ("saving", "savings"),
                            "savings account. This tool only applies to savings accounts.", "savings_credit", "",
                            {"interest_correction": "INTEREST CORRECTION - CUSTOMER SERVICE",
                             "fee_refund": "FEE REFUND - CUSTOMER SERVICE",
                             "goodwill_credit": "GOODWILL CREDIT - CUSTOMER SERVICE"})

    @discoverable_tool("write")
    def submit_interest_discrepancy_report_7294(self, account_id: str, user_id: str, expected_apy: float,
                                                actual_apy: float, amount_difference: float) -> str:
        """Submit a report for interest calculation discrepancies to the backend team for investigation. Use this when the interest credited to a customer's account does not match expected APY calculations.

        Args:
            account_id (string): The savings account ID with the discrepancy
            user_id (string): The customer's unique identifier
            expected_apy (number): The APY percentage the customer should have received (e.g., 2.775 for 2.775%)
            actual_apy (number): The APY percentage that was actually applied (e.g., 2.5 for 2.5%)
            amount_difference (number): The dollar amount difference between expected and actual interest credited

        Returns:
            Interest discrepancy report submitted successfully. Backend team will investigate.
        """
        if not account_id or not user_id or expected_apy is None or actual_apy is None or amount_difference is None:
            return "Error: Missing required parameters."
        try:
            expected_apy, actual_apy = float(expected_apy), float(actual_apy)
            amount_difference = float(amount_difference)
        except (ValueError, TypeError):
            return "Error: expected_apy, actual_apy, and amount_difference must be numbers."
        account = self.db["accounts"]["data"].get(account_id)
        if account is None:
            return f"Error: Account '{account_id}' not found."
        user = self.db["users"]["data"].get(user_id)
        if user is None:
            return f"Error: User '{user_id}' not found."
        report_id = ("IDR_" + deterministic_id(
            f"interest_report:{account_id}:{user_id}:{expected_apy}:{actual_apy}:{TODAY_STR}"))
        # upstream files it in a table the database does not have: nothing is stored
        add_to_db(self.db, "interest_discrepancy_reports", report_id, {})
        return (f"\nInterest Discrepancy Report Submitted Successfully!\n  - Report ID: {report_id}\n"
                f"  - Account: {account_id} ({account.get('level', 'Unknown')})\n"
                f"  - Customer: {user.get('name', 'Unknown')}\n  - Expected APY: {expected_apy}%\n"
                f"  - Actual APY: {actual_apy}%\n  - APY Difference: {round(expected_apy - actual_apy, 4)}%\n"
                f"  - Amount Difference: ${amount_difference:.2f}\n  - Status: PENDING_REVIEW\n"
                f"\nThe backend team will investigate this discrepancy and ensure correct APY calculations are "
                f"applied going forward.")

    @discoverable_tool("read")
    def get_bank_account_transactions_9173(self, account_id: str) -> str:
        """Retrieve the transaction history for a bank account.

        Transactions are returned in reverse chronological order (most recent
        first).

        Args:
            account_id (string): The bank account ID to retrieve transactions for

        Returns:
            Bank account transactions retrieved successfully.
        """
        if not account_id:
            return "Error: Missing required parameter: account_id"
        if account_id not in self.db["accounts"]["data"]:
            return f"Error: Account '{account_id}' not found."
        txns = sorted(query_db(self.db, "bank_account_transaction_history", return_ids=True, account_id=account_id),
                      key=_txn_date, reverse=True)
        parts = ["Bank account transactions retrieved successfully.", "",
                 "Executed: get_bank_account_transactions_9173", f"Transactions for account {account_id}:"]
        if txns:
            lines = [f"Found {len(txns)} record(s) in 'bank_account_transaction_history':\n"]
            for rank, (record_id, record) in enumerate(txns, 1):
                lines.append(f"{rank}. Record ID: {record_id}")
                lines.extend(f"   {name}: {value}" for name, value in record.items())
                lines.append("")
            parts.append("\n".join(lines))
        else:
            parts.append("\nNo transactions found for this account.")
        return "\n".join(parts)
