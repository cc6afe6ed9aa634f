"""``--toolbench-replicas``: vLLM engine replicas as Ray actors (pytest_toolbench/backends/vllm/replicas.py).

The engine tests (marked slow) run the plugin on the tiny random-weight model with one in-process engine and with two
replicas on a local Ray, over BFCL single-turn cases and multi-turn conversations (whose rounds are spread across the
replicas), and compare the caches and verdicts; then kill a replica mid-run on a Ray cluster the test started. The
option checks need neither Ray nor an engine.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import EXAMPLE_SUITE, REPO, committed_generations

sys.path.insert(0, str(Path(__file__).parent))



def engine_and_ray(test):
    """slow: each run starts real vLLM engines (about two minutes a run on two CPU cores); run with -m slow."""
    for mark in (pytest.mark.slow,
                 pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="vllm is not installed"),
                 pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (the ray "
                                                                                     "extra)")):
        test = mark(test)
    return test


# Records, per process, whether heavy modules were imported: xdist workers must import neither ray nor vllm.
IMPORT_PROBE = '''
import json, os, sys

def pytest_sessionfinish(session):
    config = session.config
    role = config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller"
    heavy = sorted(m for m in ("vllm", "torch", "transformers", "ray") if m in sys.modules)
    with open(os.environ["IMPORT_PROBE_LOG"], "a") as handle:
        handle.write(json.dumps({"role": role, "heavy": heavy}) + "\\n")
'''

# BFCL single-turn cases, then multi-turn conversations in rounds (two conversations a round: one per replica).
SELECTION = "bfcl and (simple_python or live_simple or multi_turn_base)"
CONTEXT = 32768


@pytest.fixture(scope="module")
def tiny_long_model(tmp_path_factory) -> Path:
    """The tiny model with a 32k context (BFCL's multi-turn system prompts need it)."""
    from pytest_toolbench.backends.vllm.shims import apply_cpu_environment

    apply_cpu_environment()  # inherited by the runs below, and passed on by them to the replicas (VLLM_*)
    from tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-qwen2-32k", max_position_embeddings=CONTEXT)


def plugin_run(shared_data: Path, model: Path, folder: Path, *extra: str, wait: bool = True):
    """One run over SELECTION in ``folder`` (its cache and JSON there); greedy, short answers, small KV caches."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "import_probe.py").write_text(IMPORT_PROBE)
    environment = {**os.environ, "IMPORT_PROBE_LOG": str(folder / "imports.log"),
                   "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}
    args = [sys.executable, "-m", "pytest", str(REPO / "suites"), "-k", SELECTION, "-p", "import_probe",
            "-p", "no:cacheprovider", "-q", f"--model={model}", f"--toolbench-data={shared_data}",
            "--toolbench-limit", "2", f"--toolbench-cache={folder / 'cache'}",
            f"--toolbench-json={folder / 'run.json'}", "--toolbench-max-tokens", "48", "--toolbench-temperature", "0",
            "--toolbench-vllm-arg", "enforce_eager=true", "--toolbench-vllm-arg", "dtype=float32",
            "--toolbench-vllm-arg", f"max_model_len={CONTEXT}", "--toolbench-vllm-arg",
            f"kv_cache_memory_bytes={1 << 30}", *extra]
    if not wait:
        return subprocess.Popen(args, cwd=folder, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
    return subprocess.run(args, cwd=folder, env=environment, capture_output=True, text=True, timeout=900)


def cache_rows(folder: Path) -> dict[str, dict]:
    """Every committed generation of a run's cache: key -> the stored answer (text, finish reason, tokens...)."""
    with sqlite3.connect(f"file:{folder / 'cache' / 'generations.sqlite'}?mode=ro", uri=True) as db:
        return {key: json.loads(text) for key, text in db.execute("SELECT key, generation FROM generations")}


def verdicts(folder: Path) -> dict[tuple[str, str], tuple]:
    cases = json.loads((folder / "run.json").read_text())["cases"]
    return {(c["suite"], c["case_id"]): (c["passed"], c["error_type"], c["output"], c["counts"]) for c in cases}


def header(folder: Path) -> dict:
    return json.loads((folder / "run.json").read_text())["header"]


@pytest.fixture(scope="module")
def one_engine(shared_data, tiny_long_model, tmp_path_factory) -> Path:
    """The reference: the same selection with today's one in-process engine."""
    folder = tmp_path_factory.mktemp("one-engine")
    result = plugin_run(shared_data, tiny_long_model, folder)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    stats = header(folder)["generation"]
    assert stats["rounds"] >= 2 and "replicas" not in stats["backend"]
    return folder


@engine_and_ray
def test_two_replicas_on_a_local_ray_answer_exactly_as_one_engine(shared_data, tiny_long_model, one_engine, tmp_path):
    run = plugin_run(shared_data, tiny_long_model, tmp_path, "--toolbench-replicas=2", "-n", "2")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "toolbench: 2 engine replicas on a local Ray started for this run" in run.stdout, run.stdout[-3000:]
    # same answers under the same keys (the fingerprint does not name the replicas), same verdicts and figures
    assert cache_rows(tmp_path) == cache_rows(one_engine)
    assert verdicts(tmp_path) == verdicts(one_engine)
    assert json.loads((tmp_path / "run.json").read_text())["suites"] == \
        json.loads((one_engine / "run.json").read_text())["suites"]
    stats, reference = header(tmp_path)["generation"], header(one_engine)["generation"]
    assert (stats["generated"], stats["rounds"]) == (reference["generated"], reference["rounds"])
    replicas = stats["backend"]["replicas"]
    assert replicas["count"] == 2 and replicas["events"] == []
    # both replicas took requests (every multi-turn round has two, one each), and each answer came back once
    assert all(r["requests"] > 0 for r in replicas["replicas"]), replicas
    assert sum(r["requests"] for r in replicas["replicas"]) == stats["generated"]
    roles = [json.loads(line) for line in (tmp_path / "imports.log").read_text().splitlines()]
    assert {r["role"] for r in roles} == {"controller", "gw0", "gw1"}
    assert all(r["heavy"] == [] for r in roles if r["role"] != "controller"), roles
    controller = next(r for r in roles if r["role"] == "controller")
    assert "ray" in controller["heavy"] and "vllm" not in controller["heavy"], controller  # the engines are elsewhere


@pytest.fixture(scope="module")
def ray_cluster():
    """A Ray cluster this test process starts and stays connected to (a run joins it by address)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def kill_replica(ray, suffix: str) -> None:
    """Kill the replica actor whose name ends with ``suffix`` (``-replica-1``), whichever job started it."""
    actors = [a for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].endswith(suffix)]
    assert len(actors) == 1, f"not one actor named *{suffix}: {actors}"
    ray.kill(ray.get_actor(actors[0]["name"], namespace=actors[0]["namespace"]))


@engine_and_ray
def test_a_replica_killed_mid_run_moves_its_requests_and_the_run_says_so(shared_data, tiny_long_model, one_engine,
                                                                       ray_cluster, tmp_path):
    address = ray_cluster.get_runtime_context().gcs_address
    running = plugin_run(shared_data, tiny_long_model, tmp_path, "--toolbench-replicas=2",
                         f"--toolbench-ray-address={address}", "--toolbench-commit-every=1", wait=False)
    deadline = time.monotonic() + 600
    while committed_generations(tmp_path / "cache") < 1 and running.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running.poll() is None, "the run ended before a replica could be killed"
    kill_replica(ray_cluster, "-replica-1")
    output, _ = running.communicate(timeout=900)
    assert running.returncode == 0, output[-4000:]
    assert f"toolbench: 2 engine replicas on the Ray cluster at {address}" in output, output[-4000:]
    assert "toolbench: engine replica 1 of 2 died (" in output and "moved to the other replicas; restarting it" \
        in output, output[-4000:]
    events = header(tmp_path)["generation"]["backend"]["replicas"]["events"]
    assert events and events[0].startswith("engine replica 1 of 2 died ("), events
    # nothing lost, nothing twice: every answer is there once, as one engine made it, and the verdicts too
    assert cache_rows(tmp_path) == cache_rows(one_engine)
    assert verdicts(tmp_path) == verdicts(one_engine)
    stats = header(tmp_path)["generation"]
    assert stats["generated"] == header(one_engine)["generation"]["generated"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    from pytest_toolbench.backends.vllm.shims import apply_cpu_environment

    apply_cpu_environment()
    from tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-qwen2")


def distinct_tasks(count: int) -> list:
    """Prompts of distinct lengths (task i repeats a word i times)."""
    from pytest_toolbench.contract.suite import Case, Request, Task

    return [Task(Case(f"case_{i}", "unit", {}, suite="engine"),
                 Request(messages=[{"role": "user", "content": f"Question {i}: the weather?" + " Paris" * i}]))
            for i in range(count)]


@engine_and_ray
def test_a_dead_replica_is_restarted_once_and_rejoins(tiny_model, ray_cluster):
    """The backend on its own, on the test's Ray: a replica killed between two batches; the next batch goes to the
    other with the same answers; the restarted replica comes back and takes requests again."""
    from pytest_toolbench.backends.vllm.replicas import ReplicatedVllmBackend
    from pytest_toolbench.backends.vllm.engine import VllmBackend
    from pytest_toolbench.backends.vllm.options import VllmOptions

    engine = VllmBackend(str(tiny_model), settings=VllmOptions(
        dtype="float32", max_model_len=512, engine_args={"enforce_eager": True, "kv_cache_memory_bytes": 64 << 20}),
                         max_tokens=16, temperature=0.0)
    backend = ReplicatedVllmBackend(engine, 2)
    said: list[str] = []
    backend.listen(said.append)
    tasks = distinct_tasks(12)
    try:
        backend.start()
        first = backend.generate(tasks)
        assert all(r.requests > 0 for r in backend.replicas)
        ray_cluster.kill(backend.replicas[0].handle)
        assert backend.generate(tasks) == first  # all on replica 2 now, the same answers
        assert backend.notes[0].startswith("engine replica 1 of 2 died (ActorDiedError: The actor is dead because "
                                           "it was killed by `ray.kill`.)") and "restarting it" in backend.notes[0]
        assert backend.notes[0] in said
        served = backend.replicas[0].requests
        deadline = time.monotonic() + 600
        while len(backend.notes) < 2 and time.monotonic() < deadline:  # its engine starts meanwhile
            backend.generate(tasks[:2])
            time.sleep(0.5)
        assert backend.notes[1].startswith("engine replica 1 of 2 restarted on "), backend.notes
        assert backend.generate(tasks) == first
        assert backend.replicas[0].requests > served
        replicas = backend.stats()["replicas"]
        assert [r["restarts"] for r in replicas["replicas"]] == [1, 0] and replicas["events"] == backend.notes
    finally:
        backend.close()


@engine_and_ray
def test_a_replica_that_cannot_start_is_one_error_naming_it(tiny_model, ray_cluster):
    from pytest_toolbench.backends.vllm.replicas import ReplicatedVllmBackend
    from pytest_toolbench.backends.vllm.engine import VllmBackend
    from pytest_toolbench.backends.vllm.options import VllmOptions
    from pytest_toolbench.contract.errors import ToolbenchError

    engine = VllmBackend(str(tiny_model), settings=VllmOptions(
        dtype="float32", max_model_len=512, engine_args={"enforce_eager": True, "no_such_engine_argument": 1}))
    backend = ReplicatedVllmBackend(engine, 2)
    try:
        with pytest.raises(ToolbenchError, match=r"^engine replica [12] of 2 could not start on the Ray this process "
                                                 r"is connected to: .*no_such_engine_argument"):
            backend.start()
    finally:
        backend.close()
    assert ray_cluster.is_initialized()  # a Ray the backend did not start is left as it was


# -- option checks (no engine, no Ray) ------------------------------------------------------------------------------

@pytest.fixture
def echo(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(EXAMPLE_SUITE, pytester.path, dirs_exist_ok=True)
    return pytester


def usage_error(echo: pytest.Pytester, *args: str) -> str:
    result = echo.runpytest("suites", "-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1 and "Traceback" not in result.stderr.str(), result.stderr.str()
    return errors[0]


def test_replicas_without_ray_installed_is_one_usage_error_naming_the_extra(echo, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if ray were not installed: import ray fails
    line = usage_error(echo, "--model=some/model", "--toolbench-replicas=2")
    assert line == "ERROR: --toolbench-replicas=2 needs Ray, an optional extra: pip install 'pytest-toolbench[ray]'"
    assert "--toolbench-ray-address=auto needs Ray" in usage_error(echo, "--model=m", "--toolbench-ray-address=auto")


def test_replicas_below_one_or_without_an_engine_are_usage_errors(echo):
    assert "--toolbench-replicas=0: must be a positive number of engine replicas" in \
        usage_error(echo, "--model=m", "--toolbench-replicas=0")
    assert "this run's backend has none" in usage_error(echo, "--toolbench-replicas=2")
    assert "scale its server instead" in usage_error(
        echo, "--toolbench-backend=openai", "--model=m", "--toolbench-base-url=http://127.0.0.1:9/v1",
        "--toolbench-replicas=2")


def test_one_replica_needs_no_ray_and_ray_address_alone_does_not_start_it(monkeypatch):
    from pytest_toolbench.backends.vllm.options import resolve_replicas as resolve_options

    monkeypatch.setitem(sys.modules, "ray", None)
    assert resolve_options(1, None, "vllm", environ={"RAY_ADDRESS": "10.0.0.1:6379"}) == (1, None)
    assert resolve_options(None, None, "gold", environ={}) == (1, None)


def test_replica_address_comes_from_the_option_else_ray_address(monkeypatch):
    from pytest_toolbench.backends.vllm import options as replicas

    monkeypatch.setattr(replicas, "ray_installed", lambda: True)
    assert replicas.resolve_replicas(2, None, "vllm", environ={}) == (2, None)  # a local Ray for the run
    assert replicas.resolve_replicas(2, None, "vllm", environ={"RAY_ADDRESS": "head:6379"}) == (2, "head:6379")
    assert replicas.resolve_replicas(2, "other:6379", "vllm", environ={"RAY_ADDRESS": "head:6379"}) == \
        (2, "other:6379")
    assert replicas.resolve_replicas(1, "auto", "vllm", environ={}) == (1, "auto")  # one engine, on the cluster


def test_requests_go_longest_first_to_the_least_loaded_replica():
    """The dispatch policy alone (no Ray): every request to the replica with the least outstanding work, longest
    first, identical requests once; a replica's window bounds what it holds."""
    from pytest_toolbench.backends.vllm.dispatch import READY, Dispatch as _Dispatch, Replica
    from pytest_toolbench.backends.vllm.replicas import ReplicatedVllmBackend
    from pytest_toolbench.backends.vllm.batch import PreparedBatch

    prompts = [[1] * 10, [2] * 9, [3] * 8, [4] * 7, [5] * 6, [6] * 5, [2] * 9]  # the last repeats the second
    sampling = {i: {"max_tokens": 0, "temperature": 0.0} for i in range(len(prompts))}
    runnable = sorted(range(len(prompts)), key=lambda i: (-len(prompts[i]), i))
    batch = PreparedBatch(prompts, sampling, runnable, [None] * len(prompts), [], None, [None] * len(prompts))

    class Engine:
        name, chunk_size, commit_seconds, on_chunk, on_progress = "vllm", None, 30.0, None, None

    owner = ReplicatedVllmBackend(Engine(), 2)
    owner.replicas = [Replica(0, state=READY), Replica(1, state=READY)]
    dispatch = _Dispatch(owner, batch, len(prompts), None, None)
    assert dispatch.remaining == 6 and dispatch.members[1] == [1, 6]
    dispatch._assign()
    first, second = owner.replicas
    assert [len(prompts[i]) for i in first.pending] == [10, 7, 6]
    assert [len(prompts[i]) for i in second.pending] == [9, 8, 5]
    assert (first.load, second.load) == (23, 22)

    owner.replicas = [Replica(0, state=READY, window=2), Replica(1, state=READY, window=2)]
    dispatch = _Dispatch(owner, batch, len(prompts), None, None)
    dispatch._assign()
    assert [len(r.pending) for r in owner.replicas] == [2, 2] and len(dispatch.queue) == 2  # the rest wait


def test_streamed_parts_start_small_and_double_up_to_the_largest():
    """One engine's streamed ``generate`` prepares its tasks in parts (``vllm.batch.part_bounds``): a small first
    part so the engine starts on the longest prompts at once, then parts twice as large, up to the largest."""
    from pytest_toolbench.backends.vllm.batch import PART_FIRST, PART_MAX, part_bounds

    assert list(part_bounds(10, first=2, largest=3)) == [(0, 2), (2, 5), (5, 8), (8, 10)]
    assert list(part_bounds(0)) == [] and list(part_bounds(5)) == [(0, 5)]
    bounds = list(part_bounds(5000))
    assert bounds[0] == (0, PART_FIRST) and bounds[-1][1] == 5000
    assert all(stop - start <= PART_MAX for start, stop in bounds)
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))


def test_parts_are_dispatched_as_they_come_and_twins_across_parts_are_merged():
    """The dispatch policy alone (no Ray), fed part by part as the controller prepares them: each part's requests
    join the queue longest first behind the earlier parts'; a request identical to one of an earlier part is not
    sent again, and is answered at once when its twin has finished already; over-long prompts are answered as their
    part comes."""
    from pytest_toolbench.backends.common import make_generation
    from pytest_toolbench.backends.vllm.dispatch import READY, Dispatch as _Dispatch, Replica
    from pytest_toolbench.backends.vllm.replicas import ReplicatedVllmBackend
    from pytest_toolbench.backends.vllm.batch import PreparedBatch

    prompts = [[1] * 10, [2] * 9, [3] * 8, [2] * 9, [1] * 10, [9] * 50]  # 3 repeats 1, 4 repeats 0; 5 is over-long
    sampling = {i: {"max_tokens": 0, "temperature": 0.0} for i in range(5)}
    batch = PreparedBatch(prompts, sampling, [], [None] * 6, [], None, [None] * 6)
    over_long = make_generation("", "length", 50, 0, None)

    class Engine:
        name, chunk_size, commit_seconds, on_chunk, on_progress = "vllm", None, 30.0, None, None

    owner = ReplicatedVllmBackend(Engine(), 2)
    owner.replicas = [Replica(0, state=READY), Replica(1, state=READY)]
    parts = iter([([0, 1], []), ([2, 3], []), ([4], [(5, over_long)])])
    dispatch = _Dispatch(owner, batch, 6, None, None, parts=parts)
    dispatch._next_part()
    assert dispatch.remaining == 2 and [first for _, first in sorted(dispatch.queue)] == [0, 1]
    dispatch._next_part()
    assert dispatch.remaining == 3 and dispatch.members[1] == [1, 3]  # its twin of the first part
    assert [first for _, first in sorted(dispatch.queue)] == [0, 1, 2]
    # request 0 finishes on a replica before the last part (its twin 4 and the over-long 5) comes
    owner.replicas[0].outstanding[0] = dispatch.cost[0]
    dispatch._receive(owner.replicas[0], [(dispatch.wire_of[0], "answer", "stop", 10, 1)])
    dispatch._next_part()
    assert dispatch.remaining == 2 and 4 not in dispatch.wire_of  # not sent again
    assert batch.results[4] == batch.results[0] and batch.results[4].text == "answer"
    assert batch.results[5] is over_long
    assert sorted(index for index, _ in dispatch.pending_rows) == [0, 4, 5]
    dispatch._next_part()
    assert not dispatch.feeding
