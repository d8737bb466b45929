"""``labrig jobs`` and ``labrig worker`` as an operator runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from labrig.bootstrap import bootstrap
from labrig.cli import main
from labrig.jobs.queue import JobSpec
from labrig.store import open_store, utcnow
from labrig.store.models import Job
from labrig.store.search import COUNT_AHEAD

REPO = Path(__file__).resolve().parents[2]


def labrig(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "labrig", "--store", str(store), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )


def _enqueue(store: Path, *args: str) -> dict[str, object]:
    result = labrig(store, "jobs", "enqueue", "labrig.selftest", "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_enqueue_work_list_and_events(tmp_path: Path) -> None:
    first = _enqueue(tmp_path, "--input", "ab" * 32, "--config", '{"steps": 2}')
    second = _enqueue(tmp_path, "--after", str(first["id"])[:8])
    assert (first["state"], second["state"]) == ("Ready", "InputsPending")
    worker = labrig(tmp_path, "worker", "--drain")
    assert worker.returncode == 0, worker.stderr
    assert "2 jobs finished (2 Succeeded)" in worker.stdout
    jobs = [json.loads(line) for line in labrig(tmp_path, "jobs", "--json").stdout.splitlines()]
    assert [j["state"] for j in jobs] == ["Succeeded", "Succeeded"]
    assert jobs[1]["input_digests"] == [jobs[0]["output_digest"]]
    names = [
        json.loads(line)["name"]
        for line in labrig(tmp_path, "events", "--json").stdout.splitlines()
    ]
    assert (
        names.count("analysis.stage.requested") == 2
        and names.count("analysis.stage.completed") == 2
    )
    text = labrig(tmp_path, "jobs", "--state", "Succeeded").stdout
    assert text.count("Succeeded") == 2


def test_cancel_and_reprocess(tmp_path: Path) -> None:
    job = _enqueue(tmp_path)
    cancelled = labrig(tmp_path, "jobs", "cancel", str(job["id"]))
    assert cancelled.returncode == 0 and "Cancelled" in cancelled.stdout
    again = labrig(tmp_path, "jobs", "cancel", str(job["id"]))
    assert again.returncode == 2 and "LABRIG_TERMINAL_STATE" in again.stderr
    new = labrig(tmp_path, "jobs", "reprocess", str(job["id"]), "--json")
    assert json.loads(new.stdout)["supersedes_job_id"] == job["id"]


def test_incidents_listing_when_there_are_none(tmp_path: Path) -> None:
    result = labrig(tmp_path, "jobs", "incidents")
    assert result.returncode == 0 and "No reproducibility incidents." in result.stdout
    assert json.loads(labrig(tmp_path, "jobs", "incidents", "--json").stdout) == []


def test_bad_input_is_refused_with_a_code_and_nothing_stored(tmp_path: Path) -> None:
    bad_json = labrig(tmp_path, "jobs", "enqueue", "labrig.selftest", "--config", "{steps: 2")
    assert (
        bad_json.returncode == 2
        and "LABRIG_USAGE" in bad_json.stderr
        and "not valid JSON" in bad_json.stderr
    )
    not_object = labrig(tmp_path, "jobs", "enqueue", "labrig.selftest", "--config", "[1]")
    assert not_object.returncode == 2 and "JSON object" in not_object.stderr
    unknown = labrig(tmp_path, "jobs", "enqueue", "no.such.stage")
    assert unknown.returncode == 2 and "LABRIG_UNKNOWN_STAGE" in unknown.stderr
    missing = labrig(tmp_path, "jobs", "cancel", "deadbeef")
    assert missing.returncode == 2 and "LABRIG_UNKNOWN_JOB" in missing.stderr
    assert labrig(tmp_path, "jobs").stdout.strip() == "No jobs."


def test_a_headless_worker_publishes_the_results_of_the_attempts_it_analyses(
    tmp_path: Path,
) -> None:
    from labrig.bootstrap import bootstrap
    from labrig.capture.devices import DeviceInfo, DeviceKind
    from labrig.capture.recorder import Recorder
    from labrig.capture.sessions import create_attempt, create_session
    from labrig.capture.sources import Mode
    from labrig.capture.virtual import VirtualCamera
    from labrig.pipeline.attempts import attempt_pipeline
    from labrig.store.models import AnalysisResultRecord

    services = bootstrap(tmp_path)
    device = DeviceInfo("virtual:markers", DeviceKind.VIRTUAL, "Labrig virtual camera", "markers")
    recorder = Recorder(
        services.store, VirtualCamera("markers", frames_limit=30), device, Mode(640, 480, 30.0)
    )
    recorder.start()
    recorder.wait(30)
    capture_id = recorder.stop().capture_id
    session_id = create_session(services.queue, "S-9", "reach", "ana")
    attempt_id = create_attempt(
        services.queue, session_id, [capture_id], attempt_pipeline(services.store, capture_id)
    )
    services.close()
    worker = labrig(tmp_path, "worker", "--drain")
    assert worker.returncode == 0, worker.stderr
    names = [
        json.loads(line)["name"]
        for line in labrig(tmp_path, "events", "--json").stdout.splitlines()
    ]
    assert "result.published" in names
    services = bootstrap(tmp_path)
    with services.store.read() as session:
        [result] = list(session.query(AnalysisResultRecord).filter_by(attempt_id=attempt_id))
    services.close()
    assert result.status == "published"


def test_jobs_a_page_at_a_time_with_filters_and_the_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path)

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["--store", store, *args])
        out, err = capsys.readouterr()
        return code, out, err

    ids = []
    for i in range(7):
        code, out, _err = run(
            "jobs", "enqueue", "labrig.selftest", "--input", f"{i:064x}", "--json"
        )
        ids.append(json.loads(out)["id"])
    run("jobs", "cancel", ids[2])
    code, out, _err = run("jobs", "--newest-first", "--limit", "3", "--offset", "1")
    lines = out.splitlines()
    assert code == 0 and [line.split()[0] for line in lines[:-1]] == ids[::-1][1:4]
    assert lines[-1] == "Jobs 2–4 of 7."
    code, out, _err = run("jobs", "--state", "Ready", "--limit", "10")
    assert out.count("Ready") == 6 and out.splitlines()[-1] == "Jobs 1–6 of 6."
    code, out, _err = run("jobs", "--state", "Cancelled", "--stage", "labrig.selftest")
    assert [line.split()[0] for line in out.splitlines()] == [ids[2]]
    code, out, _err = run("jobs", "--search", ids[5][:8].upper(), "--json")
    assert [json.loads(line)["id"] for line in out.splitlines()] == [ids[5]]
    code, out, _err = run("jobs", "--search", "S0001")
    assert code == 0 and out.strip() == "No job matches."
    code, out, err = run("jobs", "--limit", "0")
    assert code == 2 and "LABRIG_USAGE" in err and "--limit must be at least 1" in err
    code, out, err = run("jobs", "--offset", "-3")
    assert code == 2 and "LABRIG_USAGE" in err and out == ""
    assert len(json.loads("[" + ",".join(run("jobs", "--json")[1].splitlines()) + "]")) == 7

    # a period: the two oldest were created ten days ago
    catalog = open_store(tmp_path)
    with catalog.write() as session:
        session.execute(
            update(Job).where(Job.id.in_(ids[:2])).values(created_at=utcnow() - timedelta(days=10))
        )
    catalog.close()
    code, out, _err = run("jobs", "--until", "7d")
    # both at the same moment: in the order of their ids
    assert [line.split()[0] for line in out.splitlines()] == sorted(ids[:2])
    code, out, _err = run("jobs", "--since", "7d", "--limit", "50")
    assert out.splitlines()[-1] == "Jobs 1–5 of 5."
    code, out, err = run("jobs", "--since", "last week")
    assert code == 2 and "LABRIG_USAGE" in err and "--since takes a date" in err

    # a long history is counted only as far as it needs to be
    services = bootstrap(tmp_path)
    specs = [JobSpec("labrig.selftest", [f"{i:064x}"], {}) for i in range(10, COUNT_AHEAD + 10)]
    services.queue.enqueue_many(specs)
    services.close()
    code, out, _err = run("jobs", "--limit", "5")
    assert out.splitlines()[-1] == f"Jobs 1–5 of more than {COUNT_AHEAD}."
    code, out, _err = run("jobs", "--limit", "5", "--offset", "20")
    assert out.splitlines()[-1] == f"Jobs 21–25 of {COUNT_AHEAD + 7}."
