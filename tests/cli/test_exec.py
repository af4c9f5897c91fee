"""``uptime exec``: the real CLI in a process, pinging a receiver on 127.0.0.1.

The command's exit code and output pass through untouched, whatever the
pings meet; the pings go out as start, then the exit code with the output's
last 10 KB. docs/heartbeats.md.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import closed_port
from tests.cli.ping_receiver import Receiver
from tests.cli.uptime_process import (
    UPTIME,
    default_sigint,
    process_env,
    python,
    run_exec,
    uptime,
    warnings,
)
from uptime_cli.pings import MAX_BODY


@pytest.mark.parametrize("code", [0, 3])
def test_it_pings_start_then_the_exit_code_and_exits_with_it(
    receiver: Receiver, config_dir: Path, code: int
) -> None:
    done = run_exec(config_dir, receiver.ping_url(), python(f"raise SystemExit({code})"))
    assert done.returncode == code
    assert [(s.method, s.path) for s in receiver.seen] == [
        ("POST", "/ping/tok/start"),
        ("POST", f"/ping/tok/{code}"),
    ]
    assert warnings(done) == []


def test_pings_carry_the_user_agent_and_no_session(receiver: Receiver, config_dir: Path) -> None:
    done = uptime(
        config_dir,
        "exec",
        receiver.ping_url(),
        "--",
        "true",
        UPTIME_SESSION="secret-session",
    )
    assert done.returncode == 0
    for seen in receiver.pings():
        assert seen.headers["User-Agent"] == "uptime-cli/0.1.0"
        assert "Cookie" not in seen.headers and "X-Requested-With" not in seen.headers


def test_output_passes_through_byte_exact_and_is_the_message(
    receiver: Receiver, config_dir: Path
) -> None:
    code = (
        "import sys\n"
        "sys.stdout.buffer.write(b'out \\xff\\x00 no newline'); sys.stdout.flush()\n"
        "sys.stderr.buffer.write(b'err \\r\\n\\x1b[31m'); sys.stderr.flush()\n"
        "raise SystemExit(4)"
    )
    done = run_exec(config_dir, receiver.ping_url(), python(code))
    assert done.returncode == 4
    assert done.stdout == b"out \xff\x00 no newline"
    assert done.stderr == b"err \r\n\x1b[31m"
    # Two pipes, read as the command writes: between them, the order is as read.
    out, err = done.stdout, done.stderr
    assert receiver.pings()[-1].body in (out + err, err + out)


def test_stdin_passes_through(receiver: Receiver, config_dir: Path) -> None:
    code = "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read()[::-1])"
    done = run_exec(config_dir, receiver.ping_url(), python(code), input=b"abc\x00def")
    assert (done.returncode, done.stdout) == (0, b"fed\x00cba")


def test_the_message_is_the_last_10_kb_of_the_output(receiver: Receiver, config_dir: Path) -> None:
    code = (
        "import sys\n"
        "for i in range(3000):\n"
        "    sys.stdout.write(f'line {i:05}\\n')\n"  # 11 bytes a line, 33,000 in all
    )
    done = run_exec(config_dir, receiver.ping_url(), python(code))
    assert len(done.stdout) == 33_000
    body = receiver.pings()[-1].body
    assert len(body) == MAX_BODY == 10 * 1024
    assert body == done.stdout[-MAX_BODY:]


def test_a_command_killed_by_a_signal_exits_128_plus_its_number(
    receiver: Receiver, config_dir: Path
) -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    done = run_exec(config_dir, receiver.ping_url(), python(code))
    assert done.returncode == 128 + signal.SIGTERM == 143
    assert receiver.paths() == ["/ping/tok/start", "/ping/tok/143"]


def test_sigterm_to_exec_is_passed_on_to_the_command(receiver: Receiver, config_dir: Path) -> None:
    code = "import sys, time\nprint('ready', flush=True)\ntime.sleep(60)\n"
    proc = subprocess.Popen(
        [*UPTIME, "exec", "--", *python(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=process_env(config_dir, UPTIME_PING_URL=receiver.ping_url()),
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 143
    finally:
        proc.kill()
        proc.wait()
    assert receiver.paths() == ["/ping/tok/start", "/ping/tok/143"]
    assert receiver.pings()[-1].body == b"ready\n"


def test_sigint_to_exec_alone_leaves_the_command_running(
    receiver: Receiver, config_dir: Path
) -> None:
    # Ctrl-C reaches the command from the terminal; exec itself waits for the command's end.
    code = "import sys\nprint('ready', flush=True)\nsys.stdin.readline()\nprint('done')\n"
    proc = subprocess.Popen(
        [*UPTIME, "exec", "--", *python(code)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=process_env(config_dir, UPTIME_PING_URL=receiver.ping_url()),
        preexec_fn=default_sigint,
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(b"go\n", timeout=30)
    assert (proc.returncode, out) == (0, b"done\n")
    assert receiver.paths() == ["/ping/tok/start", "/ping/tok/0"]


def test_a_command_not_found_exits_127_and_pings_the_failure(
    receiver: Receiver, config_dir: Path
) -> None:
    done = run_exec(config_dir, receiver.ping_url(), ["no-such-command-here", "x"])
    assert done.returncode == 127
    assert warnings(done) == ["uptime: warning: no-such-command-here: command not found"]
    assert receiver.paths() == ["/ping/tok/start", "/ping/tok/127"]
    assert receiver.pings()[-1].body == b"no-such-command-here: command not found"


def test_a_file_that_is_not_executable_exits_126(
    receiver: Receiver, config_dir: Path, tmp_path: Path
) -> None:
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    done = run_exec(config_dir, receiver.ping_url(), [str(script)])
    assert done.returncode == 126
    assert receiver.paths() == ["/ping/tok/start", "/ping/tok/126"]
    assert b"Permission denied" in receiver.pings()[-1].body


def test_a_server_that_is_down_changes_nothing_but_a_warning(config_dir: Path) -> None:
    server = f"http://127.0.0.1:{closed_port()}"
    url = f"{server}/ping/tok"
    code = "print('backed up'); raise SystemExit(5)"
    done = run_exec(config_dir, url, python(code), "--ping-retries", "2")
    assert done.returncode == 5
    assert done.stdout == b"backed up\n"
    # The start ping gives up when the command ends; the exit-code ping retries twice.
    assert warnings(done)[-1].endswith(
        f"the exit code 5 ping to {server} failed: connection refused (3 attempts)"
    )
    assert "tok" not in done.stderr.decode()  # the token is the credential: never shown


def test_server_errors_are_retried_then_warned_about(receiver: Receiver, config_dir: Path) -> None:
    receiver.answer("/ping/tok/0", 500)
    done = run_exec(config_dir, receiver.ping_url(), ["true"], "--ping-retries", "2")
    assert done.returncode == 0
    assert receiver.paths() == ["/ping/tok/start"] + ["/ping/tok/0"] * 3
    assert warnings(done) == [
        f"uptime: warning: the exit code 0 ping to {receiver.url} failed: "
        "HTTP 500 Internal Server Error (3 attempts)"
    ]


def test_a_retry_that_succeeds_leaves_no_warning(receiver: Receiver, config_dir: Path) -> None:
    receiver.answer("/ping/tok/0", 503, 429, 200, headers={"Retry-After": "0"})
    done = run_exec(config_dir, receiver.ping_url(), ["true"])
    assert done.returncode == 0
    assert receiver.paths() == ["/ping/tok/start"] + ["/ping/tok/0"] * 3
    assert warnings(done) == []


def test_an_unknown_token_is_not_retried(receiver: Receiver, config_dir: Path) -> None:
    receiver.answer("/ping/tok/start", 404)
    receiver.answer("/ping/tok/0", 404)
    done = run_exec(config_dir, receiver.ping_url(), ["true"])
    assert done.returncode == 0
    assert receiver.paths() == ["/ping/tok/start", "/ping/tok/0"]
    assert len(warnings(done)) == 2
    assert all("the server knows no such ping URL (1 attempt)" in w for w in warnings(done))


def test_the_retries_stop_at_the_deadline(receiver: Receiver, config_dir: Path) -> None:
    receiver.answer("/ping/tok/0", 429, headers={"Retry-After": "30"})
    done = run_exec(config_dir, receiver.ping_url(), ["true"], "--ping-deadline", "5")
    assert done.returncode == 0
    # Waiting 30 s for the next attempt would pass the 5 s deadline: one attempt only.
    assert receiver.paths() == ["/ping/tok/start", "/ping/tok/0"]
    assert "HTTP 429 Too Many Requests (1 attempt)" in warnings(done)[0]


def test_a_start_ping_that_hangs_does_not_hold_the_command_back(
    receiver: Receiver, config_dir: Path
) -> None:
    receiver.hold("/ping/tok/start")
    # The command tells the receiver it ran: that must arrive while the start hangs.
    code = f"import urllib.request; urllib.request.urlopen('{receiver.url}/ran', timeout=10)"
    done = run_exec(config_dir, receiver.ping_url(), python(code), "--ping-deadline", "1")
    assert done.returncode == 0
    assert receiver.paths() == ["/ping/tok/start", "/ran", "/ping/tok/0"]
    assert "the start ping" in warnings(done)[0] and "timed out" in warnings(done)[0]


def test_waiting_for_the_start_ping_comes_off_the_exit_pings_deadline(
    receiver: Receiver, config_dir: Path
) -> None:
    receiver.hold("/ping/tok/start")
    receiver.answer("/ping/tok/0", 500)
    options = ("--ping-deadline", "1", "--ping-retries", "9")
    done = run_exec(config_dir, receiver.ping_url(), ["true"], *options)
    assert done.returncode == 0
    # The start took the whole second: half a second is left, room for attempts at
    # 0 and 0.25 s, not for the one at 0.75 s that a whole second would allow.
    assert receiver.paths() == ["/ping/tok/start", "/ping/tok/0", "/ping/tok/0"]


def test_it_takes_the_ping_url_as_monitor(receiver: Receiver, config_dir: Path) -> None:
    done = uptime(config_dir, "exec", receiver.ping_url("other"), "--", "false")
    assert done.returncode == 1
    assert receiver.paths() == ["/ping/other/start", "/ping/other/1"]


def test_it_resolves_a_monitor_id_through_the_api(receiver: Receiver, config_dir: Path) -> None:
    monitor = {"id": 7, "name": "backups", "type": "heartbeat", "ping_url": receiver.ping_url("t7")}
    receiver.serve_json("/api/v1/monitors/7", {"data": monitor})
    done = uptime(
        config_dir,
        "exec",
        "7",
        "--",
        "true",
        UPTIME_SERVER=receiver.url,
        UPTIME_SESSION="alice-session",
    )
    assert done.returncode == 0, done.stderr
    lookup, *pings = receiver.seen
    assert (lookup.method, lookup.path) == ("GET", "/api/v1/monitors/7")
    assert lookup.headers["Cookie"] == "session_cookie=alice-session"
    assert [p.path for p in pings] == ["/ping/t7/start", "/ping/t7/0"]


def test_a_monitor_the_api_cannot_tell_still_runs_the_command(config_dir: Path) -> None:
    server = f"http://127.0.0.1:{closed_port()}"
    done = uptime(config_dir, "exec", "7", "--", *python("print('ran')"), UPTIME_SERVER=server)
    assert (done.returncode, done.stdout) == (0, b"ran\n")
    assert "connection refused; running the command without pings" in warnings(done)[0]


@pytest.mark.parametrize(
    "args, env",
    [
        (["exec", "--", "touch", "{marker}"], {}),  # no MONITOR, no UPTIME_PING_URL
        (["exec", "ftp://example.com/ping/x", "--", "touch", "{marker}"], {}),
        (["exec", "--", "touch", "{marker}"], {"UPTIME_PING_URL": "not a url"}),
        (["exec", "http://127.0.0.1:9/ping/x", "touch", "{marker}"], {}),  # no --
        (["exec", "http://127.0.0.1:9/ping/x", "--"], {}),  # no command
    ],
)
def test_usage_errors_are_2_and_run_nothing(
    config_dir: Path, tmp_path: Path, args: list[str], env: dict[str, str]
) -> None:
    marker = tmp_path / "ran"
    done = uptime(config_dir, *(a.format(marker=marker) for a in args), **env)
    assert done.returncode == 2, done.stderr
    assert not marker.exists()
    assert b"Traceback" not in done.stderr
