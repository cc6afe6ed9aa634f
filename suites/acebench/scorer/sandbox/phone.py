"""The ACEBench phone scenario (device, messages, reminders, food delivery) in English and Chinese.

Behaviour, seed data and returned texts follow ACEBench's scenario classes (upstream ``model_inference/multi_turn``
and ``multi_step`` ``scenarios{en,zh}/phone_platform/``, read in the fork zeppombal/ACEBench @ c9391d09d1ae and
d62b0f9e5769; the pinned chenchen0103/ACEBench @ 56dd66cf is not in the code index). The texts are compared by the
model, the attributes by the end-to-end check, so both are kept exactly, quirks included (each noted where it is
implemented). Class and method names and parameter names are upstream's: a model calls them by name, and Python's own
``TypeError`` texts for bad arguments (``MessageApi.send_message() missing 1 required ...``) name them. The seed data
and the returned texts are ``phone_data.py``.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from .phone_data import FOOD_USERS, TEXTS, USERS, seed_inbox, seed_merchants, seed_reminders


def _fail(message: str) -> dict[str, Any]:
    return {"status": False, "message": message}


def _ok(message: str) -> dict[str, Any]:
    return {"status": True, "message": message}


class Scenario:
    """Language plumbing shared by the scenario classes (private names only: a model can call public ones)."""

    #: Public methods that exist in only some languages upstream: {language: names hidden in that language}.
    _HIDDEN: dict[str, frozenset[str]] = {}

    def _text(self, key: str, *values: Any) -> str:
        return TEXTS[self._language][key].format(*values)

    def _public_methods(self) -> list[str]:
        hidden = self._HIDDEN.get(self._language, frozenset())
        return [name for name in dir(self) if not name.startswith("_") and callable(getattr(self, name)) and name not in hidden]


class BaseApi(Scenario):
    def __init__(self, language: str):
        self._language = language
        self.wifi = False
        self.logged_in = True

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        # Only the device flags are read from a configuration; every other attribute keeps its seed value (the
        # agent files' initial_config holds nothing else).
        self.wifi = scenario.get("wifi", False)
        self.logged_in = scenario.get("logged_in", True)

    def turn_on_wifi(self):
        self.wifi = True
        return _ok(self._text("wifi_on"))

    def login_device(self):
        self.logged_in = True
        return _ok(self._text("device_login"))


class MessageApi(BaseApi):
    def __init__(self, language: str):
        super().__init__(language)
        self.max_capacity = 6
        self.user_list = copy.deepcopy(USERS)
        self.inbox = seed_inbox(language)
        self.message_id_counter = 6

    def send_message(self, sender_name: str, receiver_name: str, message: str):
        if self.logged_in == False:  # noqa: E712 - upstream compares with ==, so 0 counts as logged out too
            return _fail(self._text("send_not_logged_in"))
        if self.wifi == False:  # noqa: E712
            return _fail(self._text("send_wifi_off"))
        if len(self.inbox) >= self.max_capacity:
            return _fail(self._text("inbox_full"))
        if sender_name not in self.user_list or receiver_name not in self.user_list:
            return _fail(self._text("send_unknown_user"))
        self.message_id_counter += 1
        # Quirk (upstream): a sent message has no "time", so the time-based lookups raise KeyError afterwards.
        self.inbox[self.message_id_counter] = {
            "sender_id": self.user_list[sender_name]["user_id"],
            "receiver_id": self.user_list[receiver_name]["user_id"],
            "message": message,
        }
        return _ok(self._text("sent", receiver_name))

    def delete_message(self, message_id: int):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._text("delete_not_logged_in"))
        if message_id not in self.inbox:
            return _fail(self._text("no_message_id"))
        del self.inbox[message_id]
        return _ok(self._text("deleted", message_id))

    def view_messages_between_users(self, sender_name: str, receiver_name: str):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._text("view_not_logged_in"))
        if sender_name not in self.user_list:
            return _fail(self._text("no_sender"))
        if receiver_name not in self.user_list:
            return _fail(self._text("no_receiver"))
        sender_id = self.user_list[sender_name]["user_id"]
        receiver_id = self.user_list[receiver_name]["user_id"]
        found = [
            {"id": key, "sender": sender_name, "receiver": receiver_name, "message": row["message"]}
            for key, row in self.inbox.items()
            if row["sender_id"] == sender_id and row["receiver_id"] == receiver_id
        ]
        if not found:
            return _fail(self._text("no_messages_between"))
        return {"status": True, "messages": found}

    def search_messages(self, user_name: str, keyword: str):
        # No login check here upstream.
        if user_name not in self.user_list:
            return _fail(self._text("no_user"))
        user_id = self.user_list[user_name]["user_id"]
        found = [
            {"id": key, "sender_id": row["sender_id"], "receiver_id": row["receiver_id"], "message": row["message"]}
            for key, row in self.inbox.items()
            if (row["sender_id"] == user_id or row["receiver_id"] == user_id) and keyword.lower() in row["message"].lower()
        ]
        if not found:
            return _fail(self._text("no_keyword_messages"))
        return {"status": True, "messages": found}

    def get_all_message_times_with_ids(self):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._text("times_not_logged_in"))
        return {key: row["time"] for key, row in self.inbox.items()}

    def _extreme_message_id(self, later: bool) -> Any:
        best_id = None
        best_time = None
        for key, row in self.inbox.items():
            moment = datetime.strptime(row["time"], "%Y-%m-%d")
            if best_time is None or (moment > best_time if later else moment < best_time):
                best_time = moment
                best_id = key
        return best_id

    def get_latest_message_id(self):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._text("latest_not_logged_in"))
        if not self.inbox:
            return _fail(self._text("no_records"))
        found = self._extreme_message_id(later=True)
        return {"status": True, "message": self._text("latest", found), "message_id": found}

    def get_earliest_message_id(self):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._text("earliest_not_logged_in"))
        if not self.inbox:
            return _fail(self._text("no_records"))
        found = self._extreme_message_id(later=False)
        return {"status": True, "message": self._text("earliest", found), "message_id": found}


class ReminderApi(BaseApi):
    # The English class has no mark_as_notified / search_reminders upstream.
    _HIDDEN = {"en": frozenset({"mark_as_notified", "search_reminders"})}

    def __init__(self, language: str):
        # Upstream does not run the base initialiser here: wifi/logged_in exist only once a scenario is loaded.
        self._language = language
        self.max_capacity = 6
        self.reminder_list = seed_reminders(language)
        self.reminder_id_counter = 3

    def view_reminder_by_title(self, title: str):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._text("reminder_view_not_logged_in"))
        for reminder in self.reminder_list.values():
            if reminder["title"] == title:
                return {"status": True, "reminder": reminder}
        return _fail(self._text("reminder_title_missing", title))

    def add_reminder(self, title: str, description: str, time: Any):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._text("reminder_add_not_logged_in"))
        if len(self.reminder_list) >= self.max_capacity:
            return _fail(self._text("reminder_full"))
        self.reminder_id_counter += 1
        new_id = self.reminder_id_counter
        self.reminder_list[new_id] = {"reminder_id": new_id, "title": title, "description": description, "time": time,
                                      "notified": False}
        return _ok(self._text("reminder_added", title))

    def delete_reminder(self, reminder_id: int):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._text("reminder_delete_not_logged_in"))
        if reminder_id not in self.reminder_list:
            return _fail(self._text("no_reminder_id"))
        del self.reminder_list[reminder_id]
        return _ok(self._text("reminder_deleted", reminder_id))

    def view_all_reminders(self):
        # No login check here upstream.
        if not self.reminder_list:
            return _fail(self._text("no_reminders"))
        return {"status": True, "reminders": [
            {"title": r["title"], "description": r["description"], "time": r["time"], "notified": r["notified"]}
            for r in self.reminder_list.values()
        ]}

    def mark_as_notified(self, reminder_id: int):
        if reminder_id not in self.reminder_list:
            return _fail(self._text("no_reminder_id"))
        self.reminder_list[reminder_id]["notified"] = True
        return _ok(self._text("reminder_notified", reminder_id))

    def search_reminders(self, keyword: str):
        found = []
        for reminder in self.reminder_list.values():
            if keyword.lower() in reminder["title"].lower() or keyword.lower() in reminder["description"].lower():
                # Quirk (upstream): times are strings, so a match raises "'str' object has no attribute 'strftime'".
                found.append({"title": reminder["title"], "description": reminder["description"],
                              "time": reminder["time"].strftime("%Y-%m-%d %H:%M")})
        if not found:
            return _fail(self._text("no_keyword_reminders"))
        return {"status": True, "reminders": found}


class FoodPlatform(BaseApi):
    def __init__(self, language: str):
        # No base initialiser upstream either.
        self._language = language
        self.users = copy.deepcopy(FOOD_USERS)
        self.merchant_list = seed_merchants(language)
        self.logged_in_users: list[str] = []
        self.orders: list[dict[str, Any]] = []

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        super()._load_scenario(scenario, long_context)
        # Quirk (upstream): every load resets the logged-in list, and the BaseApi configuration is loaded last.
        self.logged_in_users = scenario.get("logged_in_users", [])

    def login_food_platform(self, username: str, password: str):
        if self.wifi == False:  # noqa: E712
            return _fail(self._text("food_wifi_off"))
        if username not in self.users:
            return _fail(self._text("food_no_user"))
        if self.users[username]["password"] != password:
            return _fail(self._text("food_bad_password"))
        if username in self.logged_in_users:
            return _fail(self._text("food_already_in", username))
        self.logged_in_users.append(username)
        return _ok(self._text("food_logged_in", username))

    def view_logged_in_users(self):
        if not self.logged_in_users:
            return _fail(self._text("food_nobody"))
        return {"status": True, "logged_in_users": self.logged_in_users}

    def check_balance(self, user_name: str):
        if user_name in self.users:
            return self.users[user_name]["balance"]
        # Upstream prints the notice on the console and returns 0.0 to the model.
        return 0.0

    def add_food_delivery_order(self, username: str, merchant_name: str, items: list):
        if username not in self.logged_in_users:
            return _fail(self._text("food_not_logged_in", username))
        if merchant_name not in self.merchant_list:
            return _fail(self._text("food_no_merchant"))
        total_price = 0.0
        order_items = []
        for item in items:
            product_name = item.get("product")
            quantity = item.get("quantity", 1)
            if not isinstance(quantity, int) or quantity <= 0:
                return _fail(self._text("food_bad_quantity", quantity, product_name))
            entry = next((p for p in self.merchant_list[merchant_name]["menu"] if p["product"] == product_name), None)
            if entry is None:
                return _fail(self._text("food_no_product", product_name, merchant_name))
            total_price += entry["price"] * quantity
            order_items.append({"product": product_name, "quantity": quantity, "price_per_unit": entry["price"]})
        balance = self.users[username]["balance"]
        # Quirk (upstream): the Chinese class also refuses an order that costs exactly the whole balance.
        if (total_price >= balance) if self._language == "zh" else (total_price > balance):
            return _fail(self._text("food_insufficient"))
        self.users[username]["balance"] -= total_price
        self.orders.append({"user_name": username, "merchant_name": merchant_name, "items": order_items,
                            "total_price": total_price})
        return _ok(self._text("food_ordered", merchant_name, total_price))

    def get_products(self, merchant_name: str):
        merchant = self.merchant_list.get(merchant_name)
        if merchant:
            return merchant["menu"]
        return _fail(self._text("food_merchant_missing", merchant_name))

    def view_orders(self, user_name: str):
        found = [order for order in self.orders if order["user_name"] == user_name]
        if not found:
            return _fail(self._text("food_no_orders"))
        return {"status": True, "orders": found}

    def search_orders(self, keyword: str):
        needle = keyword.lower()
        if self._language == "zh":
            # Quirk (upstream, Chinese class): items are dicts but are lower-cased as strings, so an order whose
            # merchant does not match raises "'dict' object has no attribute 'lower'".
            found = [o for o in self.orders
                     if needle in o["merchant_name"].lower() or any(needle in item.lower() for item in o.get("items", []))]
        else:
            found = [o for o in self.orders
                     if needle in o["merchant_name"].lower()
                     or any(needle in item["product"].lower() for item in o.get("items", []))]
        if not found:
            return _fail(self._text("food_no_match"))
        return {"status": True, "orders": found}
