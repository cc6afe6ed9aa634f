"""The gold agent of ACEBench's agent categories: the plan it follows (the milestone path, completed by the calls the
annotated final state implies) and ``gold_reply``, its answer at each step of the live loop (``loop.py``)."""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from pytest_toolbench.contract.suite import Case, Request
from .agent import end_to_end
from .loop import FINISH, AgentDecodeError, decode_agent_message, new_sandbox, prepare_calls, user_simulator_system
from .sandbox import Sandbox


def _milestone_path(case: Case) -> list[str]:
    milestones = case.payload.get("mile_stone") or []
    if milestones and isinstance(milestones[0], list):
        milestones = milestones[0]
    # Several milestones carry a trailing space, which upstream's decoder cannot read (see decode_agent_message);
    # PA compares stripped texts, so the stripped call is the same milestone.
    return [str(stone).strip() for stone in milestones]


def _repair_calls(sandbox: Sandbox, target: Any) -> list[str]:
    """Calls that take the sandbox from where the milestone path leaves it to the annotated final state.

    The milestones are one reference path, not always an executable one (unparsable quoting, a product name that
    is not on the menu, deleting a different message than the final state shows); the end-to-end check compares
    final states only, so the gold agent finishes the job with the calls the target state implies."""
    wanted: dict[str, Any] = {}
    for entry in target if isinstance(target, list) else [target]:
        if isinstance(entry, Mapping):
            wanted.update(entry)
    calls: list[str] = []
    base = sandbox.instances.get("BaseApi")
    base_target = wanted.get("BaseApi") or {}
    if base is not None:
        if base_target.get("wifi") is True and base.wifi is not True:
            calls.append("[turn_on_wifi()]")
        if base_target.get("logged_in") is True and base.logged_in is not True:
            calls.append("[login_device()]")
    messages = sandbox.instances.get("MessageApi")
    inbox_target = (wanted.get("MessageApi") or {}).get("inbox")
    if messages is not None and isinstance(inbox_target, Mapping):
        target_ids = {int(key) for key in inbox_target}
        for message_id in [key for key in messages.inbox if key not in target_ids]:
            calls.append(f"[delete_message(message_id={message_id!r})]")
        names = {user["user_id"]: name for name, user in messages.user_list.items()}
        for message_id in sorted(target_ids - set(messages.inbox)):
            row = inbox_target[str(message_id)] if str(message_id) in inbox_target else inbox_target[message_id]
            calls.append(f"[send_message(sender_name={names.get(row['sender_id'])!r}, "
                         f"receiver_name={names.get(row['receiver_id'])!r}, message={row['message']!r})]")
    food = sandbox.instances.get("FoodPlatform")
    food_target = wanted.get("FoodPlatform") or {}
    if food is not None and food_target:
        for user in food_target.get("logged_in_users") or []:
            if user not in food.logged_in_users and user in food.users:
                calls.append(f"[login_food_platform(username={user!r}, password={food.users[user]['password']!r})]")
        for order in (food_target.get("orders") or [])[len(food.orders):]:
            items = [{"product": item["product"], "quantity": item["quantity"]} for item in order["items"]]
            calls.append(f"[add_food_delivery_order(username={order['user_name']!r}, "
                         f"merchant_name={order['merchant_name']!r}, items={items!r})]")
    reminders = sandbox.instances.get("ReminderApi")
    reminder_target = (wanted.get("ReminderApi") or {}).get("reminder_list")
    if reminders is not None and isinstance(reminder_target, Mapping):
        target_ids = {int(key) for key in reminder_target}
        for reminder_id in [key for key in reminders.reminder_list if key not in target_ids]:
            calls.append(f"[delete_reminder(reminder_id={reminder_id!r})]")
        for reminder_id in sorted(target_ids - set(reminders.reminder_list)):
            row = reminder_target[str(reminder_id)] if str(reminder_id) in reminder_target else reminder_target[reminder_id]
            calls.append(f"[add_reminder(title={row['title']!r}, description={row['description']!r}, "
                         f"time={row['time']!r})]")
    return calls


def _run_plan(case: Case, plan: Sequence[str]) -> Sandbox:
    sandbox = new_sandbox(case)
    for text in plan:
        try:
            sandbox.execute(prepare_calls(decode_agent_message(text)))
        except AgentDecodeError:
            continue
    return sandbox


_GOLD_PLANS: dict[tuple[str, str, str], list[str]] = {}


def _decodes(text: str) -> bool:
    try:
        prepare_calls(decode_agent_message(text))
    except AgentDecodeError:
        return False
    return True


_INBOX_CALLS = re.compile(r"^\[\s*(delete_message|send_message)\(")


def gold_plan(case: Case) -> list[str]:
    """The gold agent's calls: the (first) milestone path, then the calls that complete the annotated final state.

    Milestones upstream cannot decode are left out (in agent_multi_turn such a message would go to the user). When
    the milestones delete or send other messages than the final inbox shows, the path is retried without its inbox
    calls and the repair does them in the target's order. The first candidate whose final state passes wins."""
    # Keyed by content too: the samples reuse upstream ids with other scenarios.
    key = (case.suite, case.case_id, json.dumps(case.payload, sort_keys=True, ensure_ascii=False, default=str))
    if key not in _GOLD_PLANS:
        target = case.payload["ground_truth"]
        path = [text for text in _milestone_path(case) if _decodes(text)]
        chosen = None
        for base in (path, [text for text in path if not _INBOX_CALLS.match(text)]):
            plan = base + _repair_calls(_run_plan(case, base), target)
            chosen = chosen or plan
            state = json.loads(json.dumps(_run_plan(case, plan).final_state(), ensure_ascii=False))
            if end_to_end(state, target)[0]:
                chosen = plan
                break
        _GOLD_PLANS[key] = chosen
    return list(_GOLD_PLANS[key])


def _is_user_simulator_request(case: Case, request: Request) -> bool:
    messages = list(request.messages or [])
    return bool(messages) and messages[0].get("content") == user_simulator_system(case)


def gold_reply(case: Case, step: int, request: Request) -> str:
    """The reference answer for one step of the gold run.

    The gold agent sends the gold plan one call per turn and then "finish conversation"; every call goes to the
    executor, so in agent_multi_turn the simulated user speaks only at step 0 (the case instruction) and, should the
    agent ever address it, answers "finish conversation"."""
    if case.category == "agent_multi_turn" and _is_user_simulator_request(case, request):
        return str(case.payload["question"]) if len(request.messages) == 2 else FINISH
    turn = step - 1 if case.category == "agent_multi_turn" else step
    plan = gold_plan(case)
    return plan[turn] if 0 <= turn < len(plan) else FINISH
