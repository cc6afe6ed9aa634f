"""The retail domain's records (upstream ``domains/retail/data_model.py``, 1.0.1) and the lookups its tools share
(:class:`RetailLookups`, the base of :class:`.retail.RetailTools`; no tools here, so the tools' order is theirs)."""

from ..models import F, Choice, DictOf, ListOf, Lit, Model, Opt, coerce
from ..toolkit import ToolKit


VARIANT = Model("Variant", (F("item_id", str), F("options", DictOf(str)), F("available", bool), F("price", float)))
PRODUCT = Model("Product", (F("name", str), F("product_id", str), F("variants", DictOf(VARIANT))))
USER_NAME = Model("UserName", (F("first_name", str), F("last_name", str)))
USER_ADDRESS = Model("UserAddress", (F("address1", str), F("address2", str), F("city", str), F("country", str),
                                     F("state", str), F("zip", str)))
_METHOD = Model("PaymentMethodBase", (F("source", str), F("id", str)))
CREDIT_CARD = _METHOD.extend("CreditCard", (F("source", Lit(("credit_card",))), F("brand", str), F("last_four", str)))
PAYPAL = _METHOD.extend("Paypal", (F("source", Lit(("paypal",))),))
GIFT_CARD = _METHOD.extend("GiftCard", (F("source", Lit(("gift_card",))), F("balance", float), F("id", str)))
PAYMENT_METHOD = Choice("source", (CREDIT_CARD, GIFT_CARD, PAYPAL))
USER = Model("User", (F("user_id", str), F("name", USER_NAME), F("address", USER_ADDRESS), F("email", str),
                      F("payment_methods", DictOf(PAYMENT_METHOD)), F("orders", ListOf(str))))
FULFILLMENT = Model("OrderFullfilment", (F("tracking_id", ListOf(str)), F("item_ids", ListOf(str))))
ORDER_ITEM = Model("OrderItem", (F("name", str), F("product_id", str), F("item_id", str), F("price", float),
                                 F("options", DictOf(str))))
ORDER_PAYMENT = Model("OrderPayment", (F("transaction_type", Lit(("payment", "refund"))), F("amount", float),
                                       F("payment_method_id", str)))
ORDER_STATUS = Lit(("processed", "pending", "pending (item modified)", "delivered", "cancelled",
                    "exchange requested", "return requested"))
ORDER = Model("Order", (
    F("order_id", str), F("user_id", str), F("address", USER_ADDRESS), F("items", ListOf(ORDER_ITEM)),
    F("status", ORDER_STATUS), F("fulfillments", ListOf(FULFILLMENT)), F("payment_history", ListOf(ORDER_PAYMENT)),
    F("cancel_reason", Opt(Lit(("no longer needed", "ordered by mistake"))), None),
    F("exchange_items", Opt(ListOf(str)), None), F("exchange_new_items", Opt(ListOf(str)), None),
    F("exchange_payment_method_id", Opt(str), None), F("exchange_price_difference", Opt(float), None),
    F("return_items", Opt(ListOf(str)), None), F("return_payment_method_id", Opt(str), None)))
RETAIL_DB = Model("RetailDB", (F("products", DictOf(PRODUCT)), F("users", DictOf(USER)),
                               F("orders", DictOf(ORDER))), forbid_extra=True)


def _is_gift_card(method) -> bool:
    return method["source"] == "gift_card"


class RetailLookups(ToolKit):
    """The retail database and the helpers of its tools (errors as upstream words them)."""


    db_model = RETAIL_DB

    # -- helpers (errors as upstream words them)
    def _get_order(self, order_id):
        if order_id not in self.db["orders"]:
            raise ValueError("Order not found")
        return self.db["orders"][order_id]

    def _get_user(self, user_id):
        if user_id not in self.db["users"]:
            raise ValueError("User not found")
        return self.db["users"][user_id]

    def _get_product(self, product_id):
        if product_id not in self.db["products"]:
            raise ValueError("Product not found")
        return self.db["products"][product_id]

    def _get_item(self, item_id):
        for product in self.db["products"].values():
            if item_id in product["variants"]:
                return product["variants"][item_id]
        raise ValueError("Item not found")

    def _get_variant(self, product_id, variant_id):
        product = self._get_product(product_id)
        if variant_id not in product["variants"]:
            raise ValueError("Variant not found")
        return product["variants"][variant_id]

    def _get_payment_method(self, user_id, payment_method_id):
        user = self._get_user(user_id)
        if payment_method_id not in user["payment_methods"]:
            raise ValueError("Payment method not found")
        return user["payment_methods"][payment_method_id]

    @staticmethod
    def _is_pending_order(order) -> bool:
        return "pending" in order["status"]

    @staticmethod
    def _address(address1, address2, city, state, country, zip):
        return coerce(USER_ADDRESS, {"address1": address1, "address2": address2, "city": city, "state": state,
                                     "country": country, "zip": zip})
