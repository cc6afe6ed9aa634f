"""The telecom domain's records (upstream ``domains/telecom/data_model.py``, 1.0.1) and what its tools share
(:class:`TelecomLookups`, the base of :class:`.telecom.TelecomTools`: the lookups, the one-time charge, the tasks'
initial actions and the env assertions; no tools here, so the tools' order is theirs).

Records are held as upstream's pydantic models dump them: enums as their values, dates and datetimes as ``str()`` of
the value (what ``json.dumps(..., default=str)`` writes in the hash and in a tool's result). Values a tool assigns
are kept as assigned (upstream assigns without validation: ``set_data_usage(..., 15)`` holds the int ``15``)."""

import datetime
import uuid

from ..models import DATE, DATETIME, F, ListOf, Model, NamedEnum, Opt, coerce
from ..toolkit import ToolKit

DEFAULT_START_DATE = "2025-01-01"  # upstream's default ``created_at`` (a date, not validated: dumped as such)
TODAY = datetime.date(2025, 2, 25)  # upstream ``get_today``

LINE_STATUS = NamedEnum("LineStatus", ("Active", "Suspended", "Pending Activation", "Closed"))
BILL_STATUS = NamedEnum("BillStatus", ("Draft", "Issued", "Awaiting Payment", "Paid", "Overdue", "Disputed"))
ACCOUNT_STATUS = NamedEnum("AccountStatus", ("Active", "Suspended", "Pending Verification", "Closed"))
DEVICE_TYPE = NamedEnum("DeviceType", ("phone", "router", "tablet", "watch", "other"))
PAYMENT_METHOD_TYPE = NamedEnum("PaymentMethodType", ("Credit Card", "Debit Card", "PayPal"))

ADDRESS = Model("Address", (F("street", str), F("city", str), F("state", str), F("zip_code", str)), forbid_extra=True)
PLAN = Model("Plan", (F("plan_id", str), F("name", str), F("data_limit_gb", float), F("price_per_month", float),
                      F("data_refueling_price_per_gb", float)), forbid_extra=True)
DEVICE = Model("Device", (F("device_id", str), F("device_type", DEVICE_TYPE), F("model", str),
                          F("imei", Opt(str), None), F("is_esim_capable", bool), F("activated", bool, False),
                          F("activation_date", Opt(DATETIME), None), F("last_esim_transfer_date", Opt(DATETIME), None)),
               forbid_extra=True)
LINE = Model("Line", (F("line_id", str), F("phone_number", str), F("status", LINE_STATUS, "Pending Activation"),
                      F("plan_id", str), F("device_id", Opt(str), None), F("data_used_gb", float, 0.0),
                      F("data_refueling_gb", float, 0.0), F("roaming_enabled", bool, False),
                      F("contract_end_date", Opt(DATE), None), F("last_plan_change_date", Opt(DATE), None),
                      F("last_sim_replacement_date", Opt(DATE), None), F("suspension_start_date", Opt(DATE), None)),
             forbid_extra=True)
LINE_ITEM = Model("LineItem", (F("description", str), F("amount", float), F("date", DATE), F("item_type", str)),
                  forbid_extra=True)
BILL = Model("Bill", (F("bill_id", str), F("customer_id", str), F("period_start", DATE), F("period_end", DATE),
                      F("issue_date", DATE), F("total_due", float), F("due_date", DATE),
                      F("line_items", ListOf(LINE_ITEM), list), F("status", BILL_STATUS, "Draft")), forbid_extra=True)
PAYMENT_METHOD = Model("PaymentMethod", (F("method_type", PAYMENT_METHOD_TYPE), F("account_number_last_4", str),
                                         F("expiration_date", str)), forbid_extra=True)
CUSTOMER = Model("Customer", (
    F("customer_id", str), F("full_name", str), F("date_of_birth", str), F("email", str), F("phone_number", str),
    F("address", ADDRESS), F("account_status", ACCOUNT_STATUS, "Pending Verification"),
    F("payment_methods", ListOf(PAYMENT_METHOD), list), F("line_ids", ListOf(str), list),
    F("bill_ids", ListOf(str), list), F("created_at", DATETIME, DEFAULT_START_DATE),
    F("last_extension_date", Opt(DATE), None), F("goodwill_credit_used_this_year", float, 0.0)), forbid_extra=True)
TELECOM_DB = Model("TelecomDB", (F("plans", ListOf(PLAN), list), F("customers", ListOf(CUSTOMER), list),
                                 F("lines", ListOf(LINE), list), F("bills", ListOf(BILL), list),
                                 F("devices", ListOf(DEVICE), list)), forbid_extra=True)


def _first_of_next_month(day: datetime.date) -> datetime.date:
    return (day.replace(day=1) + datetime.timedelta(days=32)).replace(day=1)


class TelecomLookups(ToolKit):
    """The telecom database, the helpers of its tools, the initial actions and the assertions."""

    db_model = TELECOM_DB

    # helpers (upstream's private methods; the records themselves, mutable)
    def _customer(self, customer_id):
        for customer in self.db["customers"]:
            if customer["customer_id"] == customer_id:
                return customer
        raise ValueError(f"Customer with ID {customer_id} not found")

    def _find(self, table: str, key: str, value, label: str):
        for record in self.db[table]:
            if record[key] == value:
                return record
        raise ValueError(f"{label} {value} not found")

    def _get_line_by_phone(self, phone_number):
        return self._find("lines", "phone_number", phone_number, "Line with phone number")

    def _get_line_by_id(self, line_id):
        return self._find("lines", "line_id", line_id, "Line with ID")

    def _get_plan_by_id(self, plan_id):
        return self._find("plans", "plan_id", plan_id, "Plan with ID")

    def _get_device_by_id(self, device_id):
        return self._find("devices", "device_id", device_id, "Device with ID")

    def _get_bill_by_id(self, bill_id):
        return self._find("bills", "bill_id", bill_id, "Bill with ID")

    def _get_target_line(self, customer_id, line_id):
        customer = self._customer(customer_id)
        if line_id not in customer["line_ids"]:
            raise ValueError(f"Line {line_id} not found for customer {customer_id}")
        return self._get_line_by_id(line_id)

    def get_available_plan_ids(self):
        return [plan["plan_id"] for plan in self.db["plans"]]

    def _get_bills_awaiting_payment(self, customer):
        bills = [self._get_bill_by_id(bill_id) for bill_id in customer["bill_ids"]]
        return [bill for bill in bills if bill and bill["status"] == "Awaiting Payment"]

    def _set_bill_to_paid(self, bill_id):
        self._get_bill_by_id(bill_id)["status"] = "Paid"
        return f"Bill {bill_id} set to paid"

    def _apply_one_time_charge(self, customer_id, amount, description):
        """Adds a line item to the customer's draft bill, creating one for next month when there is none (its id
        is random, ``B`` + 8 hex digits of a uuid4, as upstream's: a database hash after that is not reproducible)."""
        customer = self._customer(customer_id)
        draft_bill = None
        for bill_id in customer["bill_ids"]:
            bill = self._get_bill_by_id(bill_id)
            if bill and bill["status"] == "Draft":
                draft_bill = bill
                break
        if not draft_bill:
            start = _first_of_next_month(TODAY)
            end = start.replace(month=start.month + 1 if start.month < 12 else 1,
                                year=start.year if start.month < 12 else start.year + 1) - datetime.timedelta(days=1)
            new_bill_id = f"B{uuid.uuid4().hex[:8]}"
            draft_bill = coerce(BILL, {"bill_id": new_bill_id, "customer_id": customer_id, "period_start": str(start),
                                       "period_end": str(end), "issue_date": str(start), "total_due": 0,
                                       "due_date": str(start + datetime.timedelta(days=14)), "status": "Draft"})
            self.db["bills"].append(draft_bill)
            customer["bill_ids"].append(new_bill_id)
        draft_bill["line_items"].append(coerce(LINE_ITEM, {
            "description": description, "amount": amount, "date": str(TODAY),
            "item_type": "Credit" if amount < 0 else "Charge"}))
        draft_bill["total_due"] += amount

    def set_data_usage(self, customer_id, line_id, data_used_gb):
        target_line = self._get_target_line(customer_id, line_id)
        target_line["data_used_gb"] = data_used_gb
        return f"Data usage set to {data_used_gb} GB for line {line_id}"

    # break tools (the tasks' initial actions)
    def suspend_line_for_overdue_bill(self, customer_id, line_id, new_bill_id, contract_ended):
        line = self._get_line_by_id(line_id)
        if line["status"] != "Active":
            raise ValueError("Line must be active to suspend for unpaid bill")
        plan = self._get_plan_by_id(line["plan_id"])
        amount = plan["price_per_month"]
        if amount <= 0:
            raise ValueError("Amount must be positive for overdue bill")
        customer = self._customer(customer_id)
        if any(self._get_bill_by_id(bill_id)["status"] == "Overdue" for bill_id in customer["bill_ids"]):
            raise ValueError("Customer already has an overdue bill")
        last_day = TODAY.replace(day=1) - datetime.timedelta(days=1)
        first_day = last_day.replace(day=1)
        bill = coerce(BILL, {"bill_id": new_bill_id, "customer_id": customer_id, "period_start": str(first_day),
                             "period_end": str(last_day), "issue_date": str(first_day), "total_due": 0,
                             "due_date": str(first_day + datetime.timedelta(days=14)), "status": "Overdue"})
        bill["line_items"].append(coerce(LINE_ITEM, {
            "description": f"Charge for line {line['line_id']}", "amount": amount, "date": str(TODAY),
            "item_type": "Charge" if amount > 0 else "Credit"}))
        bill["total_due"] += amount
        self.db["bills"].append(bill)
        customer["bill_ids"].append(new_bill_id)
        line["status"] = "Suspended"
        line["suspension_start_date"] = str(TODAY)
        if contract_ended:
            line["contract_end_date"] = str(last_day)
        return f"Line {line_id} suspended for unpaid bill {new_bill_id}. Contract ended: {contract_ended}"

    # assertions
    def assert_data_refueling_amount(self, customer_id, line_id, expected_amount):
        return abs(self._get_target_line(customer_id, line_id)["data_refueling_gb"] - expected_amount) < 1e-6

    def assert_line_status(self, customer_id, line_id, expected_status):
        return self._get_target_line(customer_id, line_id)["status"] == expected_status

    def assert_overdue_bill_exists(self, customer_id, overdue_bill_id):
        customer = self._customer(customer_id)
        if overdue_bill_id not in customer["bill_ids"]:
            raise ValueError(f"Overdue bill {overdue_bill_id} not found")
        if self._get_bill_by_id(overdue_bill_id)["status"] != "Overdue":
            raise ValueError(f"Overdue bill {overdue_bill_id} is not overdue")
        return True

    def assert_no_overdue_bill(self, overdue_bill_id):
        try:
            if self._get_bill_by_id(overdue_bill_id)["status"] == "Paid":
                return True
        except ValueError:
            return True
        return False
