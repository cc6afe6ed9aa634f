"""banking_knowledge's agent toolkit (upstream 1.0.1 ``tools.py`` ``KnowledgeTools`` and the retrieval toolkits of
``retrieval_toolkits.py``; read there, written here).

- The agent is shown the retrieval tools of the configuration (first, as upstream's toolkit classes put their
  mixins first) and the 14 banking tools; the 44 discoverable tools are not in its list: it finds their names in the
  knowledge base, unlocks one (``unlock_discoverable_agent_tool`` shows its docstring) and calls it through
  ``call_discoverable_agent_tool`` (arguments as JSON text, every number read as a float), which logs the call in
  ``agent_discoverable_tools`` when the tool writes, or when it reads and the task's gold actions call it (the
  read-log allowlist ``tau2 run`` derives from the task). As upstream, a discoverable tool can also be called by
  its own name (no unlocking, nothing logged).
- ``give_discoverable_user_tool`` hands one of the user's discoverable tools over (``user_discoverable_tools``).
"""

import inspect
import json

from ..models import Lit
from ..toolkit import is_tool
from .banking_accounts import AccountTools
from .banking_atm import AtmTools
from .banking_credit import CreditCardTools
from .banking_credit_limit import CreditLimitTools
from .banking_debit import DebitCardTools
from .banking_debit_more import DebitCardUseTools
from .banking_records import (BANKING_DB, NOW, DiscoverableKit, add_to_db, agent_tool_id, discoverable_info,
                              format_discoverable, name_methods_as, query_database_tool, update_record, user_tool_id,
                              verification_id)
from .banking_retrieval import GrepMixin, KBSearchBm25AllToolsMixin, KBSearchMixin
from .banking_user import BankingUserTools

TRANSFER_REASONS = (
    "fraud_or_security_concern", "account_closure_request", "deceased_account_holder", "legal_or_regulatory_matter",
    "account_ownership_dispute", "complex_billing_dispute", "abusive_customer_behavior", "third_party_inquiry",
    "technical_system_error", "unconfirmed_external_communication",
    "customer_demands_after_unavailable_offer_refusal", "kb_search_unsuccessful_customer_requests_transfer",
    "specialized_department_required", "accessibility_or_special_needs", "customer_frustrated_demands_human",
    "supervisor_request_service_complaint", "customer_requests_human_no_specific_reason",
    "request_completed_customer_wants_human_followup", "other")
#: the banking tools the agent is shown, in upstream's order (after the configuration's retrieval tools)
BASE_TOOLS = ("transfer_to_human_agents", "get_current_time", "get_user_information_by_id",
              "get_user_information_by_name", "get_user_information_by_email", "change_user_email",
              "get_referrals_by_user", "get_credit_card_transactions_by_user", "get_credit_card_accounts_by_user",
              "log_verification", "give_discoverable_user_tool", "unlock_discoverable_agent_tool",
              "call_discoverable_agent_tool", "list_discoverable_agent_tools")


class BankingTools(KBSearchMixin, GrepMixin, KBSearchBm25AllToolsMixin, CreditCardTools, CreditLimitTools, AccountTools,
                   DebitCardTools, DebitCardUseTools, AtmTools, DiscoverableKit):
    """Tools for the knowledge domain (Agent tools)."""

    db_model = BANKING_DB
    #: set per environment: the configuration's retrieval tools, the knowledge base, the read-log allowlist
    retrieval_tools: tuple = ()
    knowledge = None
    read_log_allowlist: frozenset = frozenset()

    def configure(self, retrieval_tools: tuple, knowledge, read_log_allowlist) -> "BankingTools":
        self.retrieval_tools = tuple(retrieval_tools)
        self.knowledge = knowledge
        self.read_log_allowlist = frozenset(read_log_allowlist or ())
        self.unlocked: dict[str, dict] = {}
        self.given: dict[str, dict] = {}
        return self

    def update_db(self, update) -> None:
        """As upstream's, but in place: the user's toolkit holds the same database."""
        before = self.db
        super().update_db(update)
        merged, self.db = self.db, before
        self.db.clear()
        self.db.update(merged)

    def tool_names(self) -> list[str]:
        return [name for name in self.retrieval_tools if hasattr(self, name)] + list(BASE_TOOLS) \
            + sorted(self.discoverable_names())

    @is_tool("generic")
    def transfer_to_human_agents(self, summary: str, reason: Lit(TRANSFER_REASONS) = "other") -> str:
        """Transfer the user to a human agent.

        The proper transfer reason enum can be found in the knowledge base: search it before calling this tool to select the proper applicable reason.

        Args:
            summary: A summary of the user's issue and what was attempted before transfer.
            reason: The specific reason code for the transfer.
        """
        if reason not in TRANSFER_REASONS:
            return f"Error: Invalid transfer reason '{reason}'. Must be one of: {', '.join(TRANSFER_REASONS)}"
        return f"Transfer successful (reason: {reason}). A human agent will assist you shortly."

    @is_tool("read")
    def get_current_time(self) -> str:
        """Get the current time. Use this to get the current timestamp for logging verification records.

        Returns:
            The current time in the format "YYYY-MM-DD HH:MM:SS TZ"
        """
        return "The current time is 2025-11-14 03:40:00 EST."

    @is_tool("read")
    def get_user_information_by_id(self, user_id: str) -> str:
        """Get the information (date of birth, email, phone number, address) for a user by their user id.

        Args:
            user_id: The ID of the user
        """
        return query_database_tool(self.db, "users", f'{{"user_id": "{user_id}"}}')

    @is_tool("read")
    def get_user_information_by_name(self, customer_name: str) -> str:
        """Get the information (date of birth, email, phone number, address) for a user by their name. Case Sensitive.

        Args:
            customer_name: The name of the user
        """
        return query_database_tool(self.db, "users", f'{{"name": "{customer_name}"}}')

    @is_tool("read")
    def get_user_information_by_email(self, email: str) -> str:
        """Get the information (date of birth, email, phone number, address) for a user by their email.

        Args:
            email: The email of the user
        """
        return query_database_tool(self.db, "users", f'{{"email": "{email}"}}')

    @is_tool("write")
    def change_user_email(self, user_id: str, new_email: str) -> str:
        """Change the email address for a user.

        Args:
            user_id: The ID of the user whose email should be changed
            new_email: The new email address to set for the user
        """
        ok, _ = update_record(self.db, "users", user_id, {"email": new_email})
        if not ok:
            return f"Error: User with ID '{user_id}' not found."
        return f"Email updated successfully.\n  - User ID: {user_id}\n  - New Email: {new_email}"

    @is_tool("read")
    def get_referrals_by_user(self, user_id: str) -> str:
        """Get all referrals made by a user.

        Args:
            user_id: The ID of the user (referrer) to look up referrals for
        """
        return query_database_tool(self.db, "referrals", f'{{"referrer_id": "{user_id}"}}')

    @is_tool("read")
    def get_credit_card_transactions_by_user(self, user_id: str) -> str:
        """Get all credit card transactions for a user.

        Args:
            user_id: The ID of the user to look up transactions for
        """
        return query_database_tool(self.db, "credit_card_transaction_history", f'{{"user_id": "{user_id}"}}')

    @is_tool("read")
    def get_credit_card_accounts_by_user(self, user_id: str) -> str:
        """Get all credit card accounts for a user.

        Returns information about each credit card account including card type,
        date opened, current balance, and reward points.

        Args:
            user_id: The ID of the user to look up credit card accounts for
        """
        return query_database_tool(self.db, "credit_card_accounts", f'{{"user_id": "{user_id}"}}')

    @is_tool("write")
    def log_verification(self, name: str, user_id: str, address: str, email: str, phone_number: str,
                         date_of_birth: str, time_verified: str) -> str:
        """Log a verification record after successfully verifying a user's identity.

        Call this tool after you have verified a user by confirming 2 out of 4 identity fields
        (date of birth, email, phone number, address). This creates an audit record of the verification.

        Args:
            name: The verified user's full name
            user_id: The verified user's ID
            address: The verified user's address
            email: The verified user's email
            phone_number: The verified user's phone number
            date_of_birth: The verified user's date of birth (MM/DD/YYYY format)
            time_verified: The timestamp of the verification (e.g., "2025-11-14 03:40:00 EST")
        """
        record = {"name": name, "user_id": user_id, "address": address, "email": email,
                  "phone_number": phone_number, "date_of_birth": date_of_birth, "time_verified": time_verified}
        if not add_to_db(self.db, "verification_history", verification_id(user_id, time_verified), record):
            return "Failed to log verification: Record may already exist."
        return f"Verification logged successfully.\n  - User: {name} (ID: {user_id})\n  - Verified at: {time_verified}"

    @is_tool("generic", mutates_state=True)
    def give_discoverable_user_tool(self, discoverable_tool_name: str, arguments: str = "{}") -> str:
        """Pass a tool to the user so they can execute it themselves.

        Use this when the knowledge base indicates that the user should perform
        an action themselves (e.g., "to do X, have the user call tool_name(args)").

        The user will then be able to call `call_discoverable_tool` with the same
        tool name and arguments to simulate executing the action.

        Args:
            discoverable_tool_name: The name of the discoverable tool (e.g., "open_webpage", "navigate_to_section")
            arguments: JSON string of arguments for the tool (e.g., '{"url": "https://example.com"}')

        Returns:
            A confirmation message with instructions for the user
        """
        method = getattr(BankingUserTools, discoverable_tool_name, None) if isinstance(discoverable_tool_name, str) \
            else getattr(BankingUserTools, discoverable_tool_name)
        if method is None or not getattr(method, "__tau2_discoverable__", False):
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        try:
            args = json.loads(arguments)
        except json.JSONDecodeError as error:
            return f"Error: Invalid JSON in arguments: {error}"
        parameters = inspect.signature(method).parameters
        for name in args:
            if name not in parameters and name != "self":
                return f"Error: Unexpected parameter: {name}"
        info = discoverable_info(method)
        self.given[discoverable_tool_name] = {"arguments": args, "given_at": NOW.isoformat(), "tool_info": info}
        add_to_db(self.db, "user_discoverable_tools", user_tool_id(discoverable_tool_name),
                  {"tool_name": discoverable_tool_name, "status": "GIVEN"})
        shown = json.dumps(args, indent=2) if args else "(no arguments)"
        return (f"Tool given to user: {discoverable_tool_name}\nDescription: {info['description']}\n"
                f"Arguments: {shown}\n\nThe user can now execute this action by calling `call_discoverable_user_tool` "
                f"with discoverable_tool_name='{discoverable_tool_name}' and the same arguments.")

    @is_tool("generic", mutates_state=True)
    def unlock_discoverable_agent_tool(self, agent_tool_name: str) -> str:
        """Unlock an agent discoverable tool that was found in the knowledge base.

        Use this when the knowledge base indicates that you have access to a specialized
        internal tool. The knowledge base will tell you the tool name to unlock.

        After unlocking, you can use the tool by calling `call_discoverable_agent_tool` with
        the tool name and required arguments.

        Args:
            agent_tool_name: The name of the agent discoverable tool to unlock
                            (e.g., "calculate_apr_adjustment_7842")

        Returns:
            A confirmation message with the tool's description and parameters
        """
        if agent_tool_name not in self.discoverable_names():
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        info = discoverable_info(getattr(self, agent_tool_name))
        self.unlocked[agent_tool_name] = {"unlocked_at": NOW.isoformat(), "tool_info": info}
        return (f"Tool unlocked: {agent_tool_name}\nDescription: {info['description']}\n\n{format_discoverable(info)}"
                f"\n\nYou can now use this tool by calling `call_discoverable_agent_tool` with "
                f"agent_tool_name='{agent_tool_name}' and the required arguments.")

    @is_tool("write")
    def call_discoverable_agent_tool(self, agent_tool_name: str, arguments: str = "{}") -> str:
        """Call an agent discoverable tool that you have previously unlocked.

        Use this after unlocking a tool with `unlock_discoverable_agent_tool`. The knowledge base
        will tell you which tool to use and what arguments to provide.

        Args:
            agent_tool_name: The name of the agent discoverable tool to call
            arguments: JSON string of arguments for the tool (e.g., '{"user_id": "abc123"}')

        Returns:
            The result of executing the agent tool
        """
        if agent_tool_name not in self.discoverable_names():
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        if agent_tool_name not in self.unlocked:
            return (f"Error: Tool '{agent_tool_name}' has not been unlocked. You must first use "
                    f"`unlock_discoverable_agent_tool` to unlock this tool before calling it.")
        try:
            args = json.loads(arguments, parse_int=float)
        except json.JSONDecodeError as error:
            return f"Error: Invalid JSON in arguments: {error}"
        method = getattr(self, agent_tool_name)
        try:
            result = method(**args)
        except TypeError as error:
            return f"Error: Invalid arguments: {error}"
        if getattr(method, "__tau2_mutates__", False) or agent_tool_name in self.read_log_allowlist:
            add_to_db(self.db, "agent_discoverable_tools", agent_tool_id(agent_tool_name),
                      {"tool_name": agent_tool_name, "status": "CALLED"})
        return result

    @is_tool("read")
    def list_discoverable_agent_tools(self) -> str:
        """List all agent discoverable tools that you have called.

        Use this to see what specialized tools you have used.

        Returns:
            A list of tools that you have called
        """
        result = query_database_tool(self.db, "agent_discoverable_tools", "{}")
        if "No results found" in result:
            return "No agent tools have been called yet. Search the knowledge base to discover available tools."
        return f"Your called agent tools:\n{result}"


name_methods_as(BankingTools, "KnowledgeTools")
