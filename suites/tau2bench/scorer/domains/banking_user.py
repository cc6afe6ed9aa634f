"""banking_knowledge's user tools (upstream 1.0.1 ``tools.py`` ``KnowledgeUserTools``; read there, written here):
applying for a card, referrals, transactions, asking for a human, and the discoverable tools the agent gives the
user (``call_discoverable_user_tool``; each checks that it was given and logs its call). The user's toolkit works on
the agent's database (one database, as upstream's environment builds both toolkits over it)."""

import hashlib
import inspect
import json

from ..toolkit import is_tool
from .banking_credit import transaction_id
from .banking_records import (BANKING_DB, TODAY_STR, DiscoverableKit, add_to_db, application_id, deterministic_id,
                              discoverable_tool, found, lookup, name_methods_as, parse_balance, prefixed_id,
                              query_database_tool, user_tool_call_id)

CARD_TYPES = ["Bronze Rewards Card", "Business Bronze Rewards Card", "Business Gold Rewards Card",
              "Business Platinum Rewards Card", "Business Silver Rewards Card", "Crypto-Cash Back",
              "Diamond Elite Card", "EcoCard", "Gold Rewards Card", "Green Rewards Card", "Platinum Rewards Card",
              "Silver Rewards Card", "Silver Zoom Card"]
#: card -> {category: reward percent, "default": percent}
REWARDS = {
    "Bronze Rewards Card": {"default": 1.0},
    "Silver Rewards Card": {"Travel": 4.0, "Software": 4.0, "default": 1.0},
    "Gold Rewards Card": {"default": 2.5},
    "Platinum Rewards Card": {"default": 10.0},
    "Business Bronze Rewards Card": {"default": 1.0},
    "Business Silver Rewards Card": {"Travel": 10.0, "Software": 10.0, "default": 1.0},
    "Green Rewards Card": {"Sustainable": 3.0, "default": 1.0},
    "Business Gold Rewards Card": {"Operations": 2.5, "default": 1.0},
    "Business Platinum Rewards Card": {"Travel": 4.0, "Software": 4.0, "Media": 4.0, "default": 1.5},
    "Silver Zoom Card": {"Transportation": 3.0, "default": 1.0},
    "Diamond Elite Card": {"default": 5.0},
    "EcoCard": {"Green": 5.0, "default": 1.0},
    "Crypto-Cash Back": {"default": 2.0},
}


class BankingUserTools(DiscoverableKit):
    """Tools available to the user (customer) in the knowledge domain."""

    db_model = BANKING_DB

    def _not_given(self, name: str) -> str | None:
        if "No records found" in lookup(self.db, "user_discoverable_tools", "tool_name", name):
            return (f"Error: Tool '{name}' has not been given to you by the agent. The agent must first use "
                    f"`give_discoverable_user_tool` to give this tool to you.")
        return None

    def _log(self, name: str, args: dict) -> None:
        add_to_db(self.db, "user_discoverable_tool_calls", user_tool_call_id(name, args),
                  {"tool_name": name, "arguments": args, "called_at": TODAY_STR, "status": "CALLED"})

    @discoverable_tool("write")
    def submit_cash_back_dispute_0589(self, user_id: str, transaction_id: str) -> str:
        """Submit a cash back dispute for a specific transaction.

        Args:
            user_id (string): The user's unique identifier in the system
            transaction_id (string): The unique identifier for the transaction with incorrect cash back

        Returns:
            Cash back dispute submitted successfully. Your case has been queued for review.
        """
        error = self._not_given("submit_cash_back_dispute_0589")
        if error:
            return error
        args = {"user_id": user_id, "transaction_id": transaction_id}
        self._log("submit_cash_back_dispute_0589", args)
        dispute_id = prefixed_id("dsp", f"dispute:{user_id}:{transaction_id}")
        config = self.db["task_config"]["data"]
        auto = config.get("dispute_settings", {}).get("auto_resolve_disputes", False) if config else False
        record = {"dispute_id": dispute_id, "user_id": user_id, "transaction_id": transaction_id,
                  "submitted_at": TODAY_STR}
        if auto:
            record.update(status="RESOLVED", resolution="APPROVED")
            status = ("Status: RESOLVED - The dispute has been reviewed and approved. The transaction rewards need to "
                      "be updated.")
        else:
            record["status"] = "SUBMITTED"
            status = "Status: SUBMITTED - Your dispute has been queued for review."
        ok = add_to_db(self.db, "cash_back_disputes", dispute_id, record)
        result = (f"Cash back dispute submitted successfully. Your case has been queued for review.\n\nExecuted: "
                  f"submit_cash_back_dispute_0589\nArguments: {json.dumps(args, indent=2)}\n")
        return result + (f"Dispute ID: {dispute_id}\n{status}" if ok else
                         "Note: Dispute may have already been submitted for this transaction.")

    @discoverable_tool("write")
    def get_referral_link(self, user_id: str, card_name: str) -> str:
        """Generate a referral link for a specific credit card to share with friends or family.

        Args:
            user_id (string): The user's unique identifier in the system (the referrer)
            card_name (string): The name of the credit card to create a referral for (e.g., 'Gold Rewards Card')

        Returns:
            Referral link generated successfully. Share this link with the person you want to refer.
        """
        error = self._not_given("get_referral_link")
        if error:
            return error
        args = {"user_id": user_id, "card_name": card_name}
        self._log("get_referral_link", args)
        referral_id = deterministic_id(f"referral_link:{user_id}:{card_name}")
        ok = add_to_db(self.db, "referrals", referral_id,
                       {"referral_id": referral_id, "referrer_id": user_id, "referred_account_type": card_name,
                        "referral_status": "NO_PROGRESS", "date": TODAY_STR})
        result = (f"Referral link generated successfully. Share this link with the person you want to refer.\n\n"
                  f"Executed: get_referral_link\nArguments: {json.dumps(args, indent=2)}\n")
        return result + (f"Referral ID: {referral_id}\nReferral link: https://rhobank.com/refer/{referral_id}" if ok
                         else "Note: A referral link for this card may have already been generated.")

    @discoverable_tool("read")
    def get_card_last_4_digits(self, credit_card_account_id: str) -> str:
        """Look up the last 4 digits of a credit card number.

        Args:
            credit_card_account_id (string): The credit card account ID to look up (e.g., 'cc_76ad9cc60e_gold')

        Returns:
            Card information retrieved successfully.
        """
        error = self._not_given("get_card_last_4_digits")
        if error:
            return error
        args = {"credit_card_account_id": credit_card_account_id}
        self._log("get_card_last_4_digits", args)
        if not found(lookup(self.db, "credit_card_accounts", "account_id", credit_card_account_id)):
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        digits = [c for c in hashlib.sha256(f"card_last4:{credit_card_account_id}".encode()).hexdigest()
                  if c.isdigit()]
        last4 = "".join(digits[:4]).ljust(4, "0")
        return (f"Card information retrieved successfully.\n\nExecuted: get_card_last_4_digits\nArguments: "
                f"{json.dumps(args, indent=2)}\nLast 4 digits of card: {last4}")

    @discoverable_tool("write")
    def deposit_check_3847(self, account_id: str, check_amount: float) -> str:
        """Deposit a check into a checking or savings account. The user takes a photo of the check and submits it through their mobile banking app.

        Args:
            account_id (string): The bank account ID to deposit the check into
            check_amount (number): The amount of the check in USD

        Returns:
            Check deposited successfully. Funds will be available according to your account's deposit policy.
        """
        error = self._not_given("deposit_check_3847")
        if error:
            return error
        args = {"account_id": account_id, "check_amount": check_amount}
        self._log("deposit_check_3847", args)
        try:
            check_amount = float(check_amount)
        except (ValueError, TypeError):
            return f"Error: Invalid check amount '{check_amount}'. Must be a number."
        if check_amount <= 0:
            return "Error: Check amount must be positive."
        accounts = self.db["accounts"]["data"]
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Account '{account_id}' is not active."
        before = parse_balance(account.get("current_holdings", account.get("balance", 0)))
        after = before + check_amount
        account["current_holdings"] = f"${after:.2f}"
        return (f"Check deposited successfully. Funds will be available according to your account's deposit policy."
                f"\n\nExecuted: deposit_check_3847\nArguments: {json.dumps(args, indent=2)}\nCheck deposit processed!\n"
                f"  - Account: {account_id}\n  - Check Amount: ${check_amount:.2f}\n"
                f"  - Previous Balance: ${before:.2f}\n  - New Balance: ${after:.2f}")

    @is_tool("write")
    def apply_for_credit_card(self, card_type: str, customer_name: str, annual_income: float,
                              rho_bank_subscription: bool = False) -> str:
        """Apply for a credit card.

        Args:
            card_type: Type of credit card
            customer_name: Full legal name
            annual_income: Annual income in USD
            rho_bank_subscription: Whether user has Rho-Bank+ subscription
        """
        if card_type not in CARD_TYPES:
            return f"Error: Invalid card_type '{card_type}'. Must be one of: {CARD_TYPES}"
        try:
            annual_income = float(annual_income)
        except (TypeError, ValueError):
            return "Error: Invalid annual_income. Must be a number."
        record_id = application_id(card_type, customer_name, annual_income, rho_bank_subscription)
        record = {"application_id": record_id, "card_type": card_type, "customer_name": customer_name,
                  "annual_income": annual_income, "rho_bank_subscription": rho_bank_subscription,
                  "status": "PENDING", "date": TODAY_STR}
        if not add_to_db(self.db, "credit_card_applications", record_id, record):
            return f"Failed to submit application: Record ID '{record_id}' may already exist."
        return ("Credit card application submitted:\nYour application has been successfully submitted. You will "
                "receive a decision within 5-7 business days via email.")

    @is_tool("write")
    def submit_referral(self, user_id: str, account_type: str) -> str:
        """Submit a referral request to refer someone to open an account.

        Args:
            user_id: Your user ID (the referrer)
            account_type: The type of account you are referring someone to open
        """
        referral_id = deterministic_id(":".join(["referral", user_id, account_type]))
        record = {"referral_id": referral_id, "referrer_id": user_id, "referred_account_type": account_type,
                  "referral_status": "NO_PROGRESS", "date": TODAY_STR}
        if not add_to_db(self.db, "referrals", referral_id, record):
            return f"Failed to submit referral: Record ID '{referral_id}' may already exist."
        return (f"Referral request submitted successfully!\n  - Referral ID: {referral_id}\n"
                f"  - Referrer ID: {user_id}\n  - Account Type: {account_type}\n  - Status: NO_PROGRESS\n"
                f"  - Date: {TODAY_STR}\n\nShare your referral ID with the person you're referring. They will need "
                f"to use this when applying for their account.")

    @is_tool("write")
    def call_discoverable_user_tool(self, discoverable_tool_name: str, arguments: str = "{}") -> str:
        """Call a tool that was given to you by the agent.

        Use this when the agent has instructed you to perform an action using
        a discoverable tool. The agent will have told you the tool name and arguments.

        This simulates you performing the action in the real world (e.g., opening
        a webpage, navigating to a section, clicking a button).

        Args:
            discoverable_tool_name: The name of the discoverable tool to call (e.g., "open_webpage")
            arguments: JSON string of arguments for the tool (e.g., '{"url": "https://example.com"}')

        Returns:
            The result of executing the discoverable tool
        """
        if discoverable_tool_name not in self.discoverable_names():
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        try:
            args = json.loads(arguments, parse_int=float)
        except json.JSONDecodeError as error:
            return f"Error: Invalid JSON in arguments: {error}"
        method = getattr(self, discoverable_tool_name)
        parameters = inspect.signature(method).parameters
        for name, parameter in parameters.items():
            if parameter.default is inspect.Parameter.empty and name not in args:
                return f"Error: Missing required parameter: {name}"
        for name in args:
            if name not in parameters:
                return f"Error: Unexpected parameter: {name}"
        try:
            return method(**args)
        except TypeError as error:
            return f"Error: Invalid arguments for tool '{discoverable_tool_name}': {error}"

    @is_tool("read")
    def list_discoverable_user_tools(self) -> str:
        """List all tools that have been given to you by the agent.

        Use this to see what actions the agent has instructed you to perform.

        Returns:
            A list of tools that have been given to you
        """
        result = query_database_tool(self.db, "user_discoverable_tools", "{}")
        if "No results found" in result:
            return "No tools have been given to you yet by the agent."
        return f"Tools given to you by the agent:\n{result}"

    @is_tool("write")
    def request_human_agent_transfer(self) -> str:
        """Request to be transferred to a human agent for assistance.

        Use this when you want to speak with a real human agent instead of
        the automated system. Each request will be logged and processed.

        Returns:
            Confirmation that your transfer request has been submitted
        """
        existing = query_database_tool(self.db, "human_transfer_requests", "{}")
        count = 1 if not found(existing) else existing.count("request_id") + 1
        request_id = f"transfer_request_{count}"
        add_to_db(self.db, "human_transfer_requests", request_id,
                  {"request_id": request_id, "request_number": count, "requested_at": TODAY_STR, "status": "PENDING"})
        return f"Transfer request #{count} submitted.\nThe agent will process your request."

    @is_tool("write")
    def submit_transaction(self, user_id: str, credit_card_type: str, merchant_name: str, amount: float,
                           category: str) -> str:
        """Submit a credit card transaction.

        Args:
            user_id: Your user ID
            credit_card_type: Type of credit card used (e.g., "Bronze Rewards Card", "Gold Rewards Card")
            merchant_name: Name of the merchant where the purchase was made
            amount: Transaction amount in USD (e.g., 127.43)
            category: Transaction category (e.g., "Groceries", "Dining", "Travel", "Software", "Entertainment", "Utilities", "Shopping")
        """
        if credit_card_type not in REWARDS:
            return f"Error: Unknown credit card type '{credit_card_type}'. Available types: {list(REWARDS)}"
        txn = transaction_id(user_id, credit_card_type, merchant_name, amount, category)
        rates = REWARDS[credit_card_type]
        rate = rates.get(category, rates["default"])
        points = int(amount * rate)
        record = {"transaction_id": txn, "user_id": user_id, "credit_card_type": credit_card_type,
                  "merchant_name": merchant_name, "transaction_amount": f"${amount:.2f}",
                  "transaction_date": TODAY_STR, "category": category, "status": "COMPLETED",
                  "rewards_earned": f"{points} points"}
        if not add_to_db(self.db, "credit_card_transaction_history", txn, record):
            return f"Failed to submit transaction: Record ID '{txn}' may already exist."
        return (f"Transaction submitted successfully!\n  - Transaction ID: {txn}\n  - User ID: {user_id}\n"
                f"  - Card Type: {credit_card_type}\n  - Merchant: {merchant_name}\n  - Amount: ${amount:.2f}\n"
                f"  - Category: {category}\n  - Date: {TODAY_STR}\n"
                f"  - Rewards Earned: {points} points ({rate}% cashback rate)\n")


name_methods_as(BankingUserTools, "KnowledgeUserTools")
