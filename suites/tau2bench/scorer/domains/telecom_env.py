"""The telecom environment (upstream ``domains/telecom/environment.py``, 1.0.1): after every tool call the user's
surroundings follow the agent's database (``sync_tools``): whether the line is active, roaming allowed, the data
allowance exceeded, a paid payment request settles its bill, and a bill awaiting payment becomes the user's
payment request."""

from ..environment import Environment
from ..models import coerce
from .telecom_device import PAYMENT_REQUEST


class TelecomEnvironment(Environment):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sync_tools()  # upstream's Environment.__init__ syncs once

    def sync_tools(self) -> None:
        surroundings = self.user_tools.db["surroundings"]
        phone_number = surroundings["phone_number"]
        if phone_number is None:
            return
        tools = self.tools
        line = tools._get_line_by_phone(phone_number)
        if line is None:
            raise ValueError(f"Wrong scenario, line not found for phone number: {phone_number}")
        surroundings["line_active"] = line["status"] == "Active"
        surroundings["roaming_allowed"] = bool(line["roaming_enabled"])
        plan = tools._get_plan_by_id(line["plan_id"])
        if plan is None:
            raise ValueError(f"Wrong scenario, invalid plan id ({line['plan_id']}) for the phone number "
                             f"{phone_number}")
        surroundings["mobile_data_usage_exceeded"] = \
            line["data_used_gb"] >= plan["data_limit_gb"] + line["data_refueling_gb"]
        request = surroundings["payment_request"]
        if request is not None and request["paid"]:
            tools._set_bill_to_paid(request["bill_id"])
            surroundings["payment_request"] = None
        if surroundings["payment_request"] is None:
            customer = tools.get_customer_by_phone(phone_number).data
            bills = tools._get_bills_awaiting_payment(customer)
            if bills:
                surroundings["payment_request"] = coerce(PAYMENT_REQUEST, {"bill_id": bills[0]["bill_id"],
                                                                           "amount_due": bills[0]["total_due"]})
