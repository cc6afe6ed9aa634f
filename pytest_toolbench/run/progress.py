"""What pre-generation tells as it goes and keeps: the stop flags a Ctrl-C sets, the progress meter (requests done,
tokens per second, ETA), the pre-generation's figures (:class:`PregenerationStats`) and the figures of earlier runs
remembered in the cache folder."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import os
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Mapping, Sequence


#: Set when the user asked the run to stop (Ctrl-C; ``plugin.lifecycle`` sets it): the next progress report raises
#: KeyboardInterrupt again, should an engine have swallowed the first one, so generation stops within one engine step.
STOP_REQUESTED = threading.Event()
#: Set while answers are written to the cache: a Ctrl-C then waits for the write to finish (the flag above raises it
#: right after), so that an interrupt never rolls back a chunk of finished answers.
COMMITTING = threading.Event()


@dataclass
class PregenerationStats:
    requested: int = 0
    cached: int = 0
    generated: int = 0
    rounds: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0  # the whole pre-generation, engine start-up included
    engine_startup_s: float | None = None  # building the engine (None: a backend without one)
    backend: dict[str, Any] = field(default_factory=dict)
    started_backend: bool = False  # start_backend ran (it runs once, before the first request)

    @property
    def generation_s(self) -> float:
        """Wall seconds of generation: pre-generation less the engine's start-up."""
        return max(0.0, self.seconds - (self.engine_startup_s or 0.0))

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.pop("started_backend")
        seconds = self.generation_s
        data.update(
            requests=self.generated,
            generation_s=round(seconds, 3),
            engine_startup_s=None if self.engine_startup_s is None else round(self.engine_startup_s, 3),
            prompt_tokens_per_s=round(self.prompt_tokens / seconds, 1) if seconds and self.generated else None,
            output_tokens_per_s=round(self.output_tokens / seconds, 1) if seconds and self.generated else None,
        )
        return data


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return (f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m") + f"{rest % 60:02d}s"


class ProgressMeter:
    """Requests done/total, prompt and generation tokens per second, elapsed and ETA, the way vLLM's and pytest's
    users expect them: ``status`` (one updating line on a terminal) gets every change, else ``line`` gets a plain
    line at every tenth of the requests and at least every ``interval`` seconds (CI logs).

    The ETA is the remaining work over the work done so far per second, work counted in tokens (prompt plus
    output), not in requests: prompts run longest first, so the first requests are the slowest and a per-request
    rate would overstate the rest many times over. ``sizes`` (each request's prompt size in characters, in the
    order the engine gets them) gives the remaining prompts' tokens, at the characters-per-token ratio of those
    done; the remaining outputs are counted at the mean output length so far. Without ``sizes``, requests weigh
    alike. Requests still in flight are not counted as done, so with a full batch the ETA errs long early on."""

    def __init__(self, label: str, total: int, line: Callable[[str], None],
                 status: Callable[[str], None] | None = None, interval: float = 30.0,
                 clock: Callable[[], float] = time.perf_counter, sizes: Sequence[int] | None = None):
        self.label, self.total, self._line, self._status, self.interval = label, total, line, status, interval
        self._clock = clock
        self.started = clock()
        self.done = self.prompt_tokens = self.output_tokens = 0
        self._tenth = 0
        self._last_line = self.started
        # prefix sums of the prompt sizes, longest first: the first ``done`` are (about) those finished
        self._size_sums = list(itertools.accumulate(sizes, initial=0)) if sizes and len(sizes) == total else None

    def rates(self) -> str:
        """Prompt and generation tokens per second and the elapsed time."""
        elapsed = self._clock() - self.started
        rates = (f"prompt {self.prompt_tokens / elapsed:,.0f} tok/s, generation {self.output_tokens / elapsed:,.1f} "
                 "tok/s, " if elapsed > 0 else "")
        return f"{rates}elapsed {_duration(elapsed)}"

    def eta_seconds(self) -> float | None:
        """Seconds left, from the tokens left (see the class); None before any request is done or after the last."""
        done, total = self.done, self.total
        if not 0 < done < total:
            return None
        elapsed = self._clock() - self.started
        work_done = self.prompt_tokens + self.output_tokens
        if work_done <= 0:  # no token counts: the prompt sizes alone, else requests
            sums = self._size_sums
            if sums is None or sums[done] <= 0:
                return elapsed / done * (total - done)
            return elapsed * (sums[total] - sums[done]) / sums[done]
        sums = self._size_sums
        if sums is not None and sums[done] > 0:
            prompts_left = self.prompt_tokens * (sums[total] - sums[done]) / sums[done]
        else:
            prompts_left = self.prompt_tokens / done * (total - done)
        outputs_left = self.output_tokens / done * (total - done)
        return elapsed * (prompts_left + outputs_left) / work_done

    def text(self, compact: bool = False) -> str:
        """The progress line; ``compact``: the shorter form of the terminal's status line (it must fit 80
        columns, or its redraw leaves wrapped lines behind)."""
        eta = self.eta_seconds()
        percent = 100 * self.done // max(self.total, 1)
        if compact:
            elapsed = self._clock() - self.started
            rates = (f", {self.prompt_tokens / elapsed:,.0f}+{self.output_tokens / elapsed:,.1f} tok/s"
                     if elapsed > 0 else "")
            return (f"{self.label} {self.done}/{self.total} ({percent}%){rates}, {_duration(elapsed)}"
                    + (f", ETA {_duration(eta)}" if eta is not None else ""))
        text = f"{self.label}: {self.done}/{self.total} requests ({percent}%), " + self.rates()
        if eta is not None:
            text += f", ETA {_duration(eta)}"
        return text

    def update(self, done: int, prompt_tokens: int | None = None, output_tokens: int | None = None) -> None:
        self.done = done
        if prompt_tokens is not None:
            self.prompt_tokens = prompt_tokens
        if output_tokens is not None:
            self.output_tokens = output_tokens
        if self._status is not None:
            now = self._clock()
            if done >= self.total or now - self._last_line >= 0.1:  # a terminal line, redrawn at most 10 times a second
                self._last_line = now
                self._status(self.text(compact=True))
            return
        tenth = (10 * done) // max(self.total, 1)
        now = self._clock()
        if done >= self.total:
            return  # the final line, with the final figures, follows
        if tenth > self._tenth or now - self._last_line >= self.interval:
            self._tenth = max(tenth, self._tenth)
            self._last_line = now
            self._line(self.text())

    def add_tokens(self, prompt_tokens: int, output_tokens: int) -> None:
        """Tokens of committed answers, for a backend whose progress reports carry none."""
        self.prompt_tokens += prompt_tokens
        self.output_tokens += output_tokens

    def tick(self) -> None:
        """A plain line when ``interval`` passed without one (a stall shows in a CI log as the same counts)."""
        if self._status is None and self._clock() - self._last_line >= self.interval:
            self._last_line = self._clock()
            self._line(self.text())


#: runs remembered per fingerprint in the cache folder's generation-runs file (the latest kept)
REMEMBERED_RUNS = 10
_RUN_FIGURES = ("generated", "prompt_tokens", "output_tokens", "generation_s", "engine_startup_s",
                "prompt_tokens_per_s", "output_tokens_per_s", "rounds")


def _fingerprint_key(fingerprint: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True, default=str).encode()).hexdigest()


def earlier_generation_runs(path: Any, fingerprint: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The figures of the earlier runs that generated answers for ``fingerprint`` into this cache (oldest first);
    [] when there are none or the file is unreadable (it only informs the report)."""
    try:
        runs = json.loads(open(path, encoding="utf-8").read()).get(_fingerprint_key(fingerprint), [])
    except (OSError, ValueError, AttributeError):
        return []
    return [run for run in runs if isinstance(run, dict)] if isinstance(runs, list) else []


def remember_generation_run(path: Any, fingerprint: Mapping[str, Any], figures: Mapping[str, Any],
                            finished: float | None = None) -> None:
    """Add this run's generation figures to the cache folder's record (best effort: a read-only cache folder keeps
    none), so that a report made later from these cached answers can say how they were produced."""
    key = _fingerprint_key(fingerprint)
    try:
        with open(path, encoding="utf-8") as handle:
            runs = json.load(handle)
        if not isinstance(runs, dict):
            runs = {}
    except (OSError, ValueError):
        runs = {}
    entry = {name: figures.get(name) for name in _RUN_FIGURES if figures.get(name) is not None}
    entry["finished"] = datetime.fromtimestamp(finished or time.time(), timezone.utc).isoformat(timespec="seconds")
    runs[key] = ([run for run in runs.get(key, []) if isinstance(run, dict)] + [entry])[-REMEMBERED_RUNS:]
    try:
        os.makedirs(os.path.dirname(os.fspath(path)) or ".", exist_ok=True)
        temporary = f"{os.fspath(path)}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(runs, handle, indent=1, sort_keys=True)
        os.replace(temporary, path)
    except OSError:
        pass
