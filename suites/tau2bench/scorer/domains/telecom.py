"""The telecom domain's agent tools (upstream ``domains/telecom/tools.py``, 1.0.1): customers, lines, plans, bills and
devices; texts and errors as upstream's. The records and the shared helpers are in :mod:`.telecom_records`."""

import datetime

from ..toolkit import Record, is_tool
from .telecom_records import TODAY, TelecomLookups


class TelecomTools(TelecomLookups):
    """Tools for the telecom domain implementing the functions described in the PRD."""

    # Customer Lookup
    @is_tool("read")
    def get_customer_by_phone(self, phone_number: str):
        """
        Finds a customer by their primary contact or line phone number.

        Args:
            phone_number: The phone number to search for.

        Returns:
            Customer object if found, None otherwise.
        """
        for customer in self.db["customers"]:
            if customer["phone_number"] == phone_number:
                return Record(customer)
            for line_id in customer["line_ids"]:
                line = self._get_line_by_id(line_id)
                if line and line["phone_number"] == phone_number:
                    return Record(customer)
        raise ValueError(f"Customer with phone number {phone_number} not found")

    @is_tool("read")
    def get_customer_by_id(self, customer_id: str):
        """
        Retrieves a customer directly by their unique ID.

        Args:
            customer_id: The unique identifier of the customer.

        Returns:
            Customer object if found, None otherwise.
        """
        return Record(self._customer(customer_id))

    @is_tool("read")
    def get_customer_by_name(self, full_name: str, dob: str):
        """
        Searches for customers by name and DOB. May return multiple matches if names are similar,
        DOB helps disambiguate.

        Args:
            full_name: The full name of the customer.
            dob: Date of birth for verification, in the format YYYY-MM-DD.

        Returns:
            List of matching Customer objects.
        """
        return [Record(customer) for customer in self.db["customers"]
                if customer["full_name"].lower() == full_name.lower() and customer["date_of_birth"] == dob]

    @is_tool("read")
    def get_details_by_id(self, id: str):
        """
        Retrieves the details for a given ID.
        The ID must be a valid ID for a Customer, Line, Device, Bill, or Plan.

        Args:
            id: The ID of the object to retrieve.

        Returns:
            The object corresponding to the ID.

        Raises:
            ValueError: If the ID is not found or if the ID format is invalid.
        """
        if id.startswith("L"):
            return Record(self._get_line_by_id(id))
        elif id.startswith("D"):
            return Record(self._get_device_by_id(id))
        elif id.startswith("B"):
            return Record(self._get_bill_by_id(id))
        elif id.startswith("C"):
            return Record(self._customer(id))
        elif id.startswith("P"):
            return Record(self._get_plan_by_id(id))
        raise ValueError(f"Unknown ID format or type: {id}")

    @is_tool("write")
    def suspend_line(self, customer_id: str, line_id: str, reason: str):
        """
        Suspends a specific line (max 6 months).
        Checks: Line status must be Active.
        Logic: Sets line status to Suspended, records suspension_start_date.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to suspend.
            reason: Reason for suspension.

        Returns:
            Dictionary with success status, message, and updated line if applicable.

        Raises:
            ValueError: If customer or line not found, or if line is not active.
        """
        target_line = self._get_target_line(customer_id, line_id)
        if target_line["status"] != "Active":
            raise ValueError("Line must be active to suspend")
        target_line["status"] = "Suspended"
        target_line["suspension_start_date"] = str(TODAY)
        return {"message": "Line suspended successfully. $5/month holding fee will apply.",
                "line": Record(target_line)}

    @is_tool("write")
    def resume_line(self, customer_id: str, line_id: str):
        """
        Resumes a suspended line.
        Checks: Line status must be Suspended or Pending Activation.
        Logic: Sets line status to Active, clears suspension_start_date.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to resume.

        Returns:
            Dictionary with success status, message, and updated line if applicable.

        Raises:
            ValueError: If customer or line not found, or if line is not suspended or pending activation.
        """
        target_line = self._get_target_line(customer_id, line_id)
        if target_line["status"] not in ("Suspended", "Pending Activation"):
            raise ValueError("Line must be suspended to resume")
        target_line["status"] = "Active"
        target_line["suspension_start_date"] = None
        return {"message": "Line resumed successfully", "line": Record(target_line)}

    # Billing and Payments
    @is_tool("read")
    def get_bills_for_customer(self, customer_id: str, limit: int = 12):
        """
        Retrieves a list of the customer's bills, most recent first.

        Args:
            customer_id: ID of the customer.
            limit: Maximum number of bills to return.

        Returns:
            List of Bill objects, ordered by issue date (newest first).

        Raises:
            ValueError: If the customer is not found.
        """
        customer = self._customer(customer_id)
        bills = [self._get_bill_by_id(bill_id) for bill_id in customer["bill_ids"]]
        ordered = sorted(bills, key=lambda bill: bill["issue_date"], reverse=True)
        return [Record(bill) for bill in ordered[:limit]]

    @is_tool("write")
    def send_payment_request(self, customer_id: str, bill_id: str):
        """
        Sends a payment request to the customer for a specific bill.
        Checks:
            - Customer exists
            - Bill exists and belongs to the customer
            - No other bills are already awaiting payment for this customer
        Logic: Sets bill status to AWAITING_PAYMENT and notifies customer.
        Warning: This method does not check if the bill is already PAID.
        Always check the bill status before calling this method.

        Args:
            customer_id: ID of the customer who owns the bill.
            bill_id: ID of the bill to send payment request for.

        Returns:
            Message indicating the payment request has been sent.

        Raises:
            ValueError: If customer not found, bill not found, or if another bill is already awaiting payment.
        """
        customer = self._customer(customer_id)
        if self._get_bills_awaiting_payment(customer):
            raise ValueError("A bill is already awaiting payment for this customer")
        if bill_id not in customer["bill_ids"]:
            raise ValueError(f"Bill {bill_id} not found for customer {customer_id}")
        bill = self._get_bill_by_id(bill_id)
        bill["status"] = "Awaiting Payment"
        return f"Payment request sent to the customer for bill {bill['bill_id']}"

    # Usage and Contract Info
    @is_tool("read")
    def get_data_usage(self, customer_id: str, line_id: str):
        """
        Retrieves current billing cycle data usage for a line, including data
        refueling amount, data limit, and cycle end date.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to check usage for.

        Returns:
            Dictionary with usage information.

        Raises:
            ValueError: If customer, line, or plan not found.
        """
        target_line = self._get_target_line(customer_id, line_id)
        plan = self._get_plan_by_id(target_line["plan_id"])
        cycle_end_date = datetime.date(TODAY.year, TODAY.month + 1 if TODAY.month < 12 else 1, 1) \
            - datetime.timedelta(days=1)
        return {"line_id": line_id, "data_used_gb": target_line["data_used_gb"],
                "data_limit_gb": plan["data_limit_gb"], "data_refueling_gb": target_line["data_refueling_gb"],
                "cycle_end_date": cycle_end_date.isoformat()}

    @is_tool("write")
    def enable_roaming(self, customer_id: str, line_id: str):
        """
        Enables international roaming on a line.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to enable roaming for.

        Returns:
            Message indicating the roaming has been enabled.

        Raises:
            ValueError: If customer or line not found.
        """
        target_line = self._get_target_line(customer_id, line_id)
        if target_line["roaming_enabled"]:
            return "Roaming was already enabled"
        target_line["roaming_enabled"] = True
        return "Roaming enabled successfully"

    @is_tool("write")
    def disable_roaming(self, customer_id: str, line_id: str):
        """
        Disables international roaming on a line.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to disable roaming for.

        Returns:
            Message indicating the roaming has been enabled.

        Raises:
            ValueError: If customer or line not found.
        """
        target_line = self._get_target_line(customer_id, line_id)
        if not target_line["roaming_enabled"]:
            return "Roaming was already disabled"
        target_line["roaming_enabled"] = False
        return "Roaming disabled successfully"

    @is_tool("generic")
    def transfer_to_human_agents(self, summary: str):
        """
        Transfer the user to a human agent, with a summary of the user's issue.
        Only transfer if
         -  the user explicitly asks for a human agent
         -  given the policy and the available tools, you cannot solve the user's issue.

        Args:
            summary: A summary of the user's issue.

        Returns:
            A message indicating the user has been transferred to a human agent.
        """
        return "Transfer successful"

    @is_tool("write")
    def refuel_data(self, customer_id: str, line_id: str, gb_amount: float):
        """
        Refuels data for a specific line, adding to the customer's bill.
        Checks: Line status must be Active, Customer owns the line.
        Logic: Adds data to the line and charges customer based on the plan's refueling rate.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to refuel data for.
            gb_amount: Amount of data to add in gigabytes.

        Returns:
            Dictionary with success status, message, charge amount, and updated line if applicable.

        Raises:
            ValueError: If customer, line, or plan not found, or if checks fail.
        """
        target_line = self._get_target_line(customer_id, line_id)
        if gb_amount <= 0:
            raise ValueError("Refuel amount must be positive")
        plan = self._get_plan_by_id(target_line["plan_id"])
        if not plan:
            raise ValueError("Plan not found for this line")
        charge_amount = gb_amount * plan["data_refueling_price_per_gb"]
        target_line["data_refueling_gb"] += gb_amount
        self._apply_one_time_charge(
            customer_id, charge_amount,
            f"Data refueling: {gb_amount} GB at ${plan['data_refueling_price_per_gb']}/GB")
        return {"message": f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge_amount:.2f}",
                "new_data_refueling_gb": target_line["data_refueling_gb"], "charge": charge_amount}
