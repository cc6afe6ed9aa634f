"""ACEBench agent categories: the sandbox classes, the safe executor, the live loop (step limits, undecodable
replies, the simulated user's turns) and the gold trajectory through the real loop on every agent case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolbench.run.requests import run_case
from pytest_toolbench.contract.suite import Case, Generation, SuiteContext

from shipped import scorer
from pytest_toolbench.suites.acebench.scorer import loop

acebench = scorer("acebench")
loop = scorer("acebench", "loop")
UNBOUND_RESULT = scorer("acebench", "sandbox").UNBOUND_RESULT
Sandbox = scorer("acebench", "sandbox").Sandbox


REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "suites" / "acebench" / "samples"

PHONE = ["BaseApi", "MessageApi", "ReminderApi", "FoodPlatform"]


def run(sandbox: Sandbox, text: str):
    return loop.execute_message(sandbox, text)


def phone(language="en", wifi=True, logged_in=True, classes=PHONE) -> Sandbox:
    return Sandbox(language, classes, {"BaseApi": {"wifi": wifi, "logged_in": logged_in}})


# -- sandbox ---------------------------------------------------------------------------------------------------

def test_send_message_adds_an_untimed_message_after_a_deletion():
    box = phone()
    full = run(box, "[send_message(sender_name='Eve', receiver_name='Frank', message='hi')]")
    assert full == [{"status": False, "message": "Inbox capacity is full. You need to ask the user which message to delete."}]
    assert run(box, "[delete_message(message_id=4)]") == [{"status": True, "message": "Message ID 4 has been successfully deleted."}]
    assert run(box, "[send_message(sender_name='Eve', receiver_name='Frank', message='hi')]") == [
        {"status": True, "message": "Message successfully sent to Frank."}]
    inbox = box.instances["MessageApi"].inbox
    assert 4 not in inbox and inbox[7] == {"sender_id": "USR100", "receiver_id": "USR101", "message": "hi"}
    # Upstream quirk: the sent message has no time, so time lookups now fail inside the method.
    assert run(box, "[get_latest_message_id()]") == ["Error during execution: 'time'"]


def test_chinese_texts_and_logged_out_device():
    box = phone("zh", logged_in=False)
    assert run(box, "[delete_message(message_id=1)]") == [{"status": False, "message": "device未登录，无法删除短信"}]
    assert run(box, "[login_device()]") == [{"status": True, "message": "设备已经登录"}]
    assert run(box, "[delete_message(message_id=99)]") == [{"status": False, "message": "短信ID不存在"}]


def test_a_call_runs_on_every_class_that_has_the_method():
    box = phone(wifi=False)
    assert run(box, "[turn_on_wifi()]") == [{"status": True, "message": "Wi-Fi has been turned on"}]
    assert all(instance.wifi for instance in box.instances.values())


def test_reminder_add_and_final_state():
    box = phone()
    assert run(box, "[add_reminder(title='T', description='D', time='2024-06-11 16:00')]") == [
        {"status": True, "message": "Reminder 'T' was successfully added."}]
    state = dict(pair for entry in box.final_state() for pair in entry.items())
    assert state["ReminderApi"]["reminder_list"][4] == {"reminder_id": 4, "title": "T", "description": "D",
                                                         "time": "2024-06-11 16:00", "notified": False}
    assert state["BaseApi"] == {"wifi": True, "logged_in": True}
    assert set(state["FoodPlatform"]) == {"users", "logged_in_users", "orders"}


def test_reminder_methods_that_exist_only_in_chinese():
    assert run(phone("zh"), "[mark_as_notified(reminder_id=1)]") == [{"status": True, "message": "提醒ID 1 已标记为已通知"}]
    assert run(phone("en"), "[mark_as_notified(reminder_id=1)]") == [UNBOUND_RESULT]


def test_food_order_needs_wifi_login_and_balance():
    box = phone(wifi=False)
    assert run(box, "[login_food_platform(username='Eve', password='password123')]") == [
        {"status": False, "message": "Wi-Fi is not enabled, unable to login"}]
    run(box, "[turn_on_wifi()]")
    assert run(box, "[login_food_platform(username='Eve', password='password123')]") == [
        {"status": True, "message": "User Eve has successfully logged in!"}]
    result = run(box, "[add_food_delivery_order(username='Eve', merchant_name=\"Domino's\", "
                      "items=[{'product': 'Super Supreme Pizza', 'quantity': 2}])]")
    assert result == [{"status": True, "message": "Food delivery order successfully placed with Domino's. Total amount: 176.0 yuan"}]
    food = box.instances["FoodPlatform"]
    assert food.users["Eve"]["balance"] == 324.0
    assert food.orders == [{"user_name": "Eve", "merchant_name": "Domino's", "total_price": 176.0,
                            "items": [{"product": "Super Supreme Pizza", "quantity": 2, "price_per_unit": 88.0}]}]


@pytest.mark.parametrize("language,merchant,product,placed", [
    ("en", "Hema Fresh", "Organic Vegetable Pack", True),
    ("zh", "盒马生鲜", "有机蔬菜包", False),  # upstream quirk: the Chinese class refuses an order equal to the balance
])
def test_order_costing_the_whole_balance(language, merchant, product, placed):
    box = phone(language)
    run(box, "[login_food_platform(username='Jack', password='password654')]")
    result = run(box, f"[add_food_delivery_order(username='Jack', merchant_name='{merchant}', "
                      f"items=[{{'product': '{product}', 'quantity': 8}}])]")
    assert result[0]["status"] is placed


def test_travel_booking_and_its_errors():
    box = Sandbox("en", ["Travel"], {})
    booked = run(box, "[reserve_flight(user_id='user1', password='password123', flight_no='CA1234', "
                      "cabin='Economy Class', payment_method='bank', baggage_count=2)]")
    assert booked == ["Booking successful. Reservation ID: res_5. Total cost: 1250 yuan (including baggage fees)."]
    travel = box.instances["Travel"]
    assert travel.users["user1"]["bank_balance"] == 48750.0
    assert travel.reservations[-1] == {"reservation_id": "res_5", "user_id": "user1", "flight_no": "CA1234",
                                       "payment_method": "bank", "cabin": "Economy Class", "baggage": 2}
    # Upstream quirks: a wrong password is a truthy error dict (then a KeyError), an unknown flight is not checked.
    assert run(box, "[reserve_flight(user_id='user1', password='x', flight_no='CA1234', cabin='Economy Class', "
                    "payment_method='bank', baggage_count=1)]") == ["Error during execution: 'membership_level'"]
    assert run(box, "[reserve_flight(user_id='user1', password='password123', flight_no='ZZ1', cabin='Economy Class', "
                    "payment_method='bank', baggage_count=1)]") == ["Error during execution: 'NoneType' object is not subscriptable"]
    zh = Sandbox("zh", ["Travel"], {})
    assert run(zh, "[cancel_reservation(user_id='user1', reservation_id='res_1', reason='航空公司取消航班')]") == [
        "航班已取消，您的预订将被免费取消，已退款1200元。"]
    assert zh.instances["Travel"].users["user1"]["cash_balance"] == 3200.0


def test_bad_arguments_and_unknown_methods_become_error_texts():
    box = phone()
    assert run(box, "[send_message(sender_name='Eve', receiver_name='Frank')]") == [
        "Error during execution: MessageApi.send_message() missing 1 required positional argument: 'message'"]
    assert run(box, "[turn_on_wifi(level=3)]") == [
        "Error during execution: BaseApi.turn_on_wifi() got an unexpected keyword argument 'level'"]
    # An unknown method runs nothing: first in a batch it reports upstream's unbound-variable error, later the
    # previous call's result again.
    assert run(box, "[fly_to_moon()]") == [UNBOUND_RESULT]
    assert run(box, "[login_device(), fly_to_moon()]") == [{"status": True, "message": "Device has been logged in"}] * 2
    # A nested call as an argument value is re-evaluated upstream as an undefined name.
    assert run(box, "[delete_message(message_id=get_latest(x=1))]") == ["Error during execution: name 'get_latest' is not defined"]


def test_results_are_rendered_like_upstream():
    box = phone()
    # dicts become JSON and back (int keys turn into strings); lists stay Python text; floats are parsed back.
    assert run(box, "[get_all_message_times_with_ids()]")[0]["1"] == "2024-06-09"
    assert run(box, "[get_products(merchant_name='Heytea')]") == [
        "[{'product': 'Cheese Milk Tea', 'price': 25.0}, {'product': 'Four Seasons Spring Milk Tea', 'price': 22.0}]"]
    assert run(box, "[check_balance(user_name='Eve')]") == [500.0]


# -- decoding --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["[turn_on_wifi()] ", "Sure! [turn_on_wifi()]", "finish conversation", "",
                                  "[send_message(message='Domino's')]", "[f(d={'a': 1})]"])
def test_undecodable_agent_messages(text):
    with pytest.raises(loop.AgentDecodeError):
        loop.prepare_calls(loop.decode_agent_message(text))


def test_agent_decoding_rules():
    assert loop.decode_agent_message("turn_on_wifi()") == [{"turn_on_wifi": {}}]
    assert loop.decode_agent_message(" [a(x=1), b(y=[1, 'z'])]") == [{"a": {"x": 1}}, {"b": {"y": [1, "z"]}}]
    assert loop.decode_agent_message("[a(x=g())]") == [{"a": {"x": "g()"}}]
    assert loop.decode_agent_message("[a(x=+5)]") == [{"a": {"x": -5}}]
    assert loop.decode_agent_message("[42]") == []


# -- the loop --------------------------------------------------------------------------------------------------

def agent_case(category: str, classes=("BaseApi",), language="en", milestones=("[turn_on_wifi()]",)):
    return Case(suite="acebench", case_id=f"{language}-{category}_0", category=category, payload={
        "language": language, "upstream_id": f"{category}_0", "question": "Please turn on the wifi.",
        "function": [{"name": "turn_on_wifi", "description": "Turn on WiFi.", "parameters": {"type": "dict", "properties": {}}}],
        "initial_config": {"BaseApi": {"wifi": False, "logged_in": True}}, "involved_classes": list(classes),
        "ground_truth": [{"BaseApi": {"wifi": True, "logged_in": True}}],
        "mile_stone": list(milestones)})


def drive(case: Case, reply):
    """Runs a conversation; ``reply(step, request)`` answers each request. Returns (transcript, requests)."""
    requests = []
    conversation = loop.conversation(case)
    request = next(conversation)
    try:
        while True:
            requests.append(request)
            request = conversation.send(Generation(text=reply(len(requests) - 1, request)))
    except StopIteration as done:
        return done.value, requests


def test_multi_step_undecodable_reply_and_agent_never_sees_itself():
    case = agent_case("agent_multi_step")
    answers = ["I will turn it on.", "[turn_on_wifi()]", "finish conversation"]
    transcript, requests = drive(case, lambda step, request: answers[step])
    assert [d["message"] for d in transcript["dialogue"][1:]] == [
        "I will turn it on.", loop.UNDECODABLE_REPLY, "[turn_on_wifi()]",
        [{"status": True, "message": "Wi-Fi has been turned on"}], "finish conversation"]
    assert transcript["process"] == ["I will turn it on.", "[turn_on_wifi()]"]
    history = requests[2].messages[1]["content"]
    assert ("user:Please turn on the wifi.\nexecution result:" + loop.UNDECODABLE_REPLY + "\n"
            "execution result:[{'status': True, 'message': 'Wi-Fi has been turned on'}]\n") in history
    assert "agent:" not in history and "I will turn it on." not in history
    verdict = acebench.score(case, Generation(text=json.dumps(transcript)))
    assert verdict.passed, verdict.explanation


def test_multi_step_limit_and_first_turn_finish_is_executed():
    case = agent_case("agent_multi_step")
    transcript, requests = drive(case, lambda step, request: "finish conversation" if step == 0 else "[login_device()]")
    assert len(requests) == loop.MAX_MESSAGES // 2
    assert transcript["stopped_by"] == "limit" and transcript["messages"] == loop.MAX_MESSAGES + 1
    assert transcript["dialogue"][2]["message"] == loop.UNDECODABLE_REPLY


def test_multi_step_without_any_execution_has_no_final_state():
    case = agent_case("agent_multi_step")
    transcript, _ = drive(case, lambda step, request: "no calls")
    assert transcript["final_state"] == []
    assert acebench.score(case, Generation(text=json.dumps(transcript))).error_type == "wrong number of class"


def test_multi_turn_user_turns_are_requests_with_upstream_roles():
    case = agent_case("agent_multi_turn")
    script = ["Turn on my wifi please.", "Which network?", "The home one.", "[turn_on_wifi()]", "Done.",
              "finish conversation"]
    transcript, requests = drive(case, lambda step, request: script[step])
    opening = requests[0].messages
    assert opening[0]["content"].startswith("You are a user interacting with an agent.\n\nInstruction: Please turn on")
    assert opening[1] == {"role": "user", "content": "Is there anything you need help with today?"}
    user_turn = requests[2].messages
    assert [m["role"] for m in user_turn] == ["system", "user", "system", "user"]
    assert user_turn[2]["content"] == "Turn on my wifi please." and user_turn[3]["content"] == "Which network?"
    agent_request = requests[3].messages
    assert agent_request[0]["content"].startswith(loop.MULTI_TURN_AGENT_SYSTEM["en"]) and "Beijing Time" in agent_request[0]["content"]
    assert agent_request[1]["content"].endswith(
        "user:Turn on my wifi please.\nagent:Which network?\nuser:The home one.\n")
    assert transcript["process"] == ["[turn_on_wifi()]"] and transcript["stopped_by"] == "finish"
    assert acebench.score(case, Generation(text=json.dumps(transcript))).passed


def test_multi_turn_limit():
    case = agent_case("agent_multi_turn")
    transcript, requests = drive(case, lambda step, request: "Tell me more.")
    assert transcript["messages"] == loop.MAX_MESSAGES + 1 and transcript["stopped_by"] == "limit"
    assert len(requests) == loop.MAX_MESSAGES + 1


# -- gold through the real loop --------------------------------------------------------------------------------

class _Suite:
    """The parts of a loaded suite that ``run_case`` reads."""

    def __init__(self):
        self.benchmark = acebench
        self.interactive = True
        self.definition = type("Definition", (), {"max_tokens": 1024})()


def gold_run(case: Case) -> Generation:
    answer = lambda task: Generation(text=acebench.gold_reply(task.case, task.step, task.request), finish_reason="stop")
    return run_case(case, _Suite(), answer, None)


def agent_cases(data_dir: Path) -> list[Case]:
    return [c for c in acebench.load_cases(SuiteContext(data_dir, {})) if c.category in ("agent_multi_step", "agent_multi_turn")]


def test_gold_trajectory_passes_every_agent_case_through_the_loop(shared_data):
    cases = agent_cases(shared_data / "acebench")
    assert len(cases) == 100
    failed = []
    for case in cases:
        generation = gold_run(case)
        transcript = json.loads(generation.text)
        assert transcript["dialogue"], case.case_id  # really ran through the loop
        verdict = acebench.score(case, generation)
        if not verdict.passed:
            failed.append((case.case_id, verdict.explanation[:200]))
    assert failed == []


def test_gold_trajectory_on_the_samples():
    cases = agent_cases(SAMPLES)
    assert cases
    for case in cases:
        assert acebench.score(case, gold_run(case)).passed, case.case_id


def test_non_agent_cases_are_single_requests():
    cases = [c for c in acebench.load_cases(SuiteContext(SAMPLES, {})) if not c.category.startswith("agent")]
    assert cases and not any(acebench.is_interactive(c) for c in cases)


def test_an_int_too_long_to_print_is_an_undecodable_reply_not_a_crash():
    """repr() of an int of over 4,300 digits raises ValueError (Python 3.11+), as upstream's rendering of the call
    text would: the reply is one the execution role cannot decode, never an exception that stops the conversation
    (found by tests/test_hostile_model.py when the hostile value 10**5000 reached a multi-step agent)."""
    decoded = loop.decode_agent_message("[get_weather(city=10**5000)]")
    with pytest.raises(loop.AgentDecodeError):
        loop.prepare_calls(decoded)
    assert loop.prepare_calls(loop.decode_agent_message("[get_weather(city=10**3)]"))[0].arguments == {"city": 1000}
