"""The ACEBench phone scenario's seed data (users, inbox, reminders, food platform users and merchants) and the texts
its methods return, in English and Chinese, transcribed from upstream's ``scenarios{en,zh}/phone_platform/`` (see
``phone.py``, whose classes use them, for the sources). Both are compared, the texts by the model and the seeded
attributes by the end-to-end check, so they are kept exactly."""

from __future__ import annotations

from typing import Any

USERS = {
    "Eve": {"user_id": "USR100", "phone_number": "123-456-7890", "occupation": "Software Engineer"},
    "Frank": {"user_id": "USR101", "phone_number": "234-567-8901", "occupation": "Data Scientist"},
    "Grace": {"user_id": "USR102", "phone_number": "345-678-9012", "occupation": "Product Manager"},
    "Helen": {"user_id": "USR103", "phone_number": "456-789-0123", "occupation": "UX Designer"},
    "Isaac": {"user_id": "USR104", "phone_number": "567-890-1234", "occupation": "DevOps Engineer"},
    "Jack": {"user_id": "USR105", "phone_number": "678-901-2345", "occupation": "Marketing Specialist"},
}

_MESSAGE_2 = {
    "en": "Can you help me order a \"Margherita Pizza\" delivery? The merchant is Domino's.",
    "zh": "你能帮我点一个\"玛格丽特披萨\"的外卖吗,商家是达美乐。",
}
_MESSAGE_3 = {
    "en": "Please check the milk tea delivery options available from Heytea and purchase a cheaper milk tea for me. "
    "After making the purchase, remember to reply to me with \"Already bought.\"",
    "zh": "帮我查一些喜茶有哪些奶茶外卖，买一杯便宜些的奶茶。买完以后记得回复我,回复的内容是（已经买好了）",
}


def seed_inbox(language: str) -> dict[int, dict[str, str]]:
    rows = [
        ("USR100", "USR101", "Hey Frank, don't forget about our meeting on 2024-06-11 at 4 PM in Conference Room 1.", "2024-06-09"),
        ("USR101", "USR102", _MESSAGE_2[language], "2024-03-09"),
        ("USR102", "USR103", _MESSAGE_3[language], "2023-12-05"),
        ("USR103", "USR102", "No problem Helen, I can assist you.", "2024-09-09"),
        ("USR104", "USR105", "Isaac, are you available for a call?", "2024-06-06"),
        ("USR105", "USR104", "Yes Jack, let's do it in 30 minutes.", "2024-01-15"),
    ]
    return {i: {"sender_id": s, "receiver_id": r, "message": m, "time": t} for i, (s, r, m, t) in enumerate(rows, 1)}


_TODO_DESCRIPTION = {
    "en": "First, help Frank place a food delivery order at \"Hema Fresh,\" ordering two \"Fresh Gift Packs.\" Then, "
    "send a message to Frank saying, \"The price of the purchased goods is () yuan.\" Replace the parentheses with the "
    "actual amount, keeping one decimal place.",
    "zh": "首先帮Frank在\"盒马生鲜\"点外卖，需要定两个\"生鲜大礼包\"，再发短信告诉Frank：\"购买商品的价格是()元\"。要把括号换成实际金额，保留一位小数。",
}


def seed_reminders(language: str) -> dict[int, dict[str, Any]]:
    return {
        1: {"reminder_id": 1001, "title": "Doctor's Appointment", "description": "Visit Dr. Smith for a checkup.",
            "time": "2024-07-15 09:30", "notified": False},
        2: {"reminder_id": 1002, "title": "Team Meeting", "description": "Monthly project review with the team.",
            "time": "2024-07-17 11:00", "notified": False},
        3: {"reminder_id": 1003, "title": "To-do list", "description": _TODO_DESCRIPTION[language],
            "time": "2024-07-16 11:00", "notified": False},
    }


FOOD_USERS = {
    "Eve": {"user_id": "U100", "password": "password123", "balance": 500.0},
    "Frank": {"user_id": "U101", "password": "password456", "balance": 300.0},
    "Grace": {"user_id": "U102", "password": "password789", "balance": 150.0},
    "Helen": {"user_id": "U103", "password": "password321", "balance": 800.0},
    "Isaac": {"user_id": "U104", "password": "password654", "balance": 400.0},
    "Jack": {"user_id": "U105", "password": "password654", "balance": 120.0},
}

# (merchant id, service type, English name, Chinese name, [(English product, Chinese product, price)])
_MERCHANTS = [
    ("M100", "Pizza", "Domino's", "达美乐", [("Margherita Pizza", "玛格丽特披萨", 68.0), ("Super Supreme Pizza", "超级至尊披萨", 88.0)]),
    ("M101", "Bibimbap", "Rice Village Bibimbap", "米村拌饭", [("Stone Pot Bibimbap", "石锅拌饭", 35.0), ("Korean Beef Bibimbap", "韩式牛肉拌饭", 45.0)]),
    ("M102", "Hotpot", "Haidilao", "海底捞", [("Beef Rolls", "牛肉卷", 68.0), ("Seafood Platter", "海鲜拼盘", 88.0)]),
    ("M103", "Milk Tea", "Heytea", "喜茶", [("Cheese Milk Tea", "芝士奶茶", 25.0), ("Four Seasons Spring Milk Tea", "四季春奶茶", 22.0)]),
    ("M104", "Fresh Grocery", "Hema Fresh", "盒马生鲜", [("Organic Vegetable Pack", "有机蔬菜包", 15.0), ("Fresh Gift Pack", "生鲜大礼包", 99.0)]),
    ("M105", "BBQ", "Jiutian BBQ", "九田家烤肉", [("Korean Grilled Beef", "韩式烤牛肉", 128.0), ("Grilled Pork Belly", "烤五花肉", 78.0)]),
]


def seed_merchants(language: str) -> dict[str, dict[str, Any]]:
    zh = language == "zh"
    return {
        (zh_name if zh else en_name): {
            "merchant_id": merchant_id,
            "service_type": service,
            "menu": [{"product": zh_product if zh else en_product, "price": price} for en_product, zh_product, price in menu],
        }
        for merchant_id, service, en_name, zh_name, menu in _MERCHANTS
    }


#: Returned texts, per language; ``{}`` fields are filled with str.format.
TEXTS = {
    "en": {
        "wifi_on": "Wi-Fi has been turned on",
        "device_login": "Device has been logged in",
        "send_not_logged_in": "Device not logged in, unable to send message",
        "send_wifi_off": "Wi-Fi is turned off, cannot send messages at this time",
        "inbox_full": "Inbox capacity is full. You need to ask the user which message to delete.",
        "send_unknown_user": "Sender or receiver does not exist",
        "sent": "Message successfully sent to {}.",
        "delete_not_logged_in": "Device not logged in, unable to delete message",
        "no_message_id": "Message ID does not exist",
        "deleted": "Message ID {} has been successfully deleted.",
        "view_not_logged_in": "Device not logged in, unable to view message information",
        "no_sender": "Sender does not exist",
        "no_receiver": "Receiver does not exist",
        "no_messages_between": "No related message records found",
        "no_user": "User does not exist",
        "no_keyword_messages": "No messages found containing the keyword",
        "times_not_logged_in": "Device not logged in, unable to retrieve all message times and their corresponding message IDs.",
        "latest_not_logged_in": "Device not logged in, unable to retrieve the latest sent message ID.",
        "no_records": "No message records found",
        "latest": "The latest message ID is {}",
        "earliest_not_logged_in": "Device not logged in, unable to retrieve the earliest sent message ID.",
        "earliest": "The earliest message ID is {}",
        "reminder_view_not_logged_in": "The device is not logged in, so you cannot view notifications",
        "reminder_title_missing": "No reminder found with the title '{}'.",
        "reminder_add_not_logged_in": "Device not logged in. Unable to add a new reminder.",
        "reminder_full": "Reminder capacity is full. Unable to add a new reminder.",
        "reminder_added": "Reminder '{}' was successfully added.",
        "reminder_delete_not_logged_in": "Device not logged in. Unable to delete the specified reminder.",
        "no_reminder_id": "Reminder ID does not exist.",
        "reminder_deleted": "Reminder ID {} was successfully deleted.",
        "no_reminders": "No reminders found.",
        "food_wifi_off": "Wi-Fi is not enabled, unable to login",
        "food_no_user": "User does not exist",
        "food_bad_password": "Incorrect password",
        "food_already_in": "{} is already logged in",
        "food_logged_in": "User {} has successfully logged in!",
        "food_nobody": "No users are currently logged in to the food platform",
        "food_balance_unknown_user": "User {} does not exist!",
        "food_not_logged_in": "User {} is not logged in to the food platform",
        "food_no_merchant": "Merchant does not exist",
        "food_bad_quantity": "Invalid quantity {} for product {}",
        "food_no_product": "Product {} does not exist in {}'s menu",
        "food_insufficient": "Insufficient balance to place the order",
        "food_ordered": "Food delivery order successfully placed with {}. Total amount: {} yuan",
        "food_merchant_missing": "Merchant '{}' does not exist",
        "food_no_orders": "User has no order records",
        "food_no_match": "No matching orders found",
    },
    "zh": {
        "wifi_on": "wifi已经打开",
        "device_login": "设备已经登录",
        "send_not_logged_in": "device未登录，无法发送短信",
        "send_wifi_off": "wifi关闭，此时不能发送信息",
        "inbox_full": "内存容量不够了，你需要询问user删除哪一条短信。",
        "send_unknown_user": "发送者或接收者不存在",
        "sent": "短信成功发送给{}。",
        "delete_not_logged_in": "device未登录，无法删除短信",
        "no_message_id": "短信ID不存在",
        "deleted": "短信ID {} 已成功删除。",
        "view_not_logged_in": "device未登录，无法查看短信信息",
        "no_sender": "发送者不存在",
        "no_receiver": "接收者不存在",
        "no_messages_between": "没有找到相关的短信记录",
        "no_user": "用户不存在",
        "no_keyword_messages": "没有找到包含关键词的短信",
        "times_not_logged_in": "device未登录，获取所有短信的时间以及对应的短信编号。",
        "latest_not_logged_in": "device未登录，无法获取最新发送的短信ID。",
        "no_records": "短信记录为空",
        "latest": "最新的短信ID是 {}",
        "earliest_not_logged_in": "device未登录，无法获取最早发送的短信ID",
        "earliest": "最早的短信ID是 {}",
        "reminder_view_not_logged_in": "device未登录，无法查看提醒",
        "reminder_title_missing": "没有找到标题为 '{}' 的提醒",
        "reminder_add_not_logged_in": "device未登录，无法添加一个新的提醒",
        "reminder_full": "提醒容量已满，无法添加新的提醒",
        "reminder_added": "提醒 '{}' 已成功添加",
        "reminder_delete_not_logged_in": "device未登录，无法删除指定的提醒",
        "no_reminder_id": "提醒ID不存在",
        "reminder_deleted": "提醒ID {} 已成功删除",
        "no_reminders": "没有任何提醒",
        "reminder_notified": "提醒ID {} 已标记为已通知",
        "no_keyword_reminders": "没有找到包含该关键词的提醒",
        "food_wifi_off": "wifi未打开，无法登录",
        "food_no_user": "用户不存在",
        "food_bad_password": "密码错误",
        "food_already_in": "{} 已经登录",
        "food_logged_in": "用户{}登陆成功！",
        "food_nobody": "当前没有登录food platform",
        "food_balance_unknown_user": "用户 {} 不存在!",
        "food_not_logged_in": "用户 {} 未登录food platform",
        "food_no_merchant": "商家不存在",
        "food_bad_quantity": "无效的数量 {} 对于商品 {}",
        "food_no_product": "商品 {} 不存在于 {} 的菜单中",
        "food_insufficient": "余额不足，无法下单",
        "food_ordered": "外卖订单成功下单给 {}，总金额为 {} 元",
        "food_merchant_missing": "商家 '{}' 不存在",
        "food_no_orders": "用户没有订单记录",
        "food_no_match": "没有找到匹配的订单",
    },
}
