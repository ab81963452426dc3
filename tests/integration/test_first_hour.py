"""The first hour of a new user, as a script in an empty folder (issue #21).

Every step is a real `python -m bot` subprocess, and each runs only what the step before
printed: `bot once --dry-run --paper` with no config at all (the demo's), `bot init
--non-interactive` and the three commands it prints (the strategy check, the paper dry
run, a short `bot run --paper` stopped with SIGTERM after its first fills), `bot
strategies new` with the config entry and commands it prints (the check, the generated
test), `bot config check`, and `bot backtest` of both strategies on a synthesized week.
"""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.support.cli import clean_env

WEEK = ["--from", "2026-01-01T00:00:00Z", "--to", "2026-01-08T00:00:00Z"]


class User:
    """Runs printed commands in a folder: `bot …` as `python -m bot …`, `cd` moves."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = clean_env(BOT_DAEMON__LOCK_DIR=str(folder / "locks"))

    def argv(self, command: str) -> list[str]:
        words = shlex.split(command)
        if words[0] == "bot":
            return [sys.executable, "-m", "bot", *words[1:]]
        assert words[0] == "python", command  # the generated test's `python -m pytest …`
        return [sys.executable, *words[1:]]

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        if command.startswith("cd "):
            self.folder = self.folder / shlex.split(command)[1]
            return subprocess.CompletedProcess(command, 0, "", "")
        result = subprocess.run(
            self.argv(command),
            capture_output=True,
            text=True,
            cwd=self.folder,
            env=self.env,
            timeout=300,
            check=False,
        )
        assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
        return result

    def run_until(self, command: str, *wanted: str, limit: float = 90.0) -> list[str]:
        """Start `command`, stop it with SIGTERM once every `wanted` text was printed.

        Its standard output is read by one thread only (this one's reader: with
        `communicate` beside it, the two would share the last lines); its errors go to a
        file, read once it has exited.
        """
        with tempfile.TemporaryFile("w+") as errors:
            process = subprocess.Popen(
                self.argv(command),
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
                cwd=self.folder,
                env=self.env,
            )
            assert process.stdout is not None
            lines: list[str] = []
            reader = threading.Thread(
                target=lambda: lines.extend(process.stdout or []), daemon=True
            )
            reader.start()
            deadline = time.monotonic() + limit
            try:
                while time.monotonic() < deadline:
                    if all(any(w in line for line in lines) for w in wanted):
                        break
                    time.sleep(0.2)
            finally:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=60)
                reader.join(timeout=10)
            errors.seek(0)
            err = errors.read()
        assert process.returncode == 0, err
        assert all(any(w in line for line in lines) for w in wanted), "".join(lines) + err
        return [line.rstrip("\n") for line in lines]


def _after(output: str, heading: str) -> list[str]:
    """The indented lines under `heading` (a line starting with it)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    block = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        block.append(line.strip())
    return block


def test_the_first_hour(tmp_path: Path) -> None:
    user = User(tmp_path)

    # Before anything: without --paper, one line saying what to do instead (no key made).
    bare = subprocess.run(
        user.argv("bot once --dry-run"),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=user.env,
        timeout=120,
        check=False,
    )
    assert bare.returncode == 2
    assert bare.stderr.splitlines() == [
        "bot: error: no [[strategies]] configured: `bot init` makes a config; "
        "`bot once --dry-run --paper` with no config ticks the demo's"
    ]
    assert not (tmp_path / "data").exists()
    # The one-shot dry run works like the demo, with no config at all.
    demo = user.run("bot once --dry-run --paper")
    assert "[dry run] demo-dca: create DCA" in demo.stdout
    assert demo.stdout.endswith("\n")  # the shell prompt starts on a line of its own

    made = user.run(
        "bot init first --non-interactive --strategy recurring_dca "
        "--from-token USDC --to-token APT --amount 25 --every '1 day'"
    )
    key = (tmp_path / "first" / "data" / "wallet.key").read_text().strip()
    assert key not in made.stdout + made.stderr
    cd, check, dry_run, run = _after(made.stdout, "next")
    assert run == "bot run --paper"

    user.run(cd)
    assert user.run(check).stdout.startswith("my-dca: OK (recurring_dca")
    dry = user.run(dry_run)
    assert dry.stdout.splitlines() == [
        "[dry run] my-dca: create DCA: 25 USDC per order → APT, 7 orders every 1 day"
    ]
    assert dry.stdout.endswith("\n")

    new = user.run("bot strategies new steady_buyer")
    text = new.stdout
    entry = text[text.index("[[strategies]]") : text.index("then:")]
    with (user.folder / "config.toml").open("a") as config:
        config.write("\n" + entry)
    check_new, test_new = _after(text, "then:")
    assert user.run(check_new).stdout.startswith("steady_buyer: OK (steady_buyer")
    assert "2 passed" in user.run(test_new).stdout
    assert user.run("bot config check").stdout.startswith("config OK: config.toml")

    lines = user.run_until(run, "my-dca bought", "steady_buyer bought")
    assert lines[0].startswith("bot running: 2 strategies")
    assert lines[-1] == "bot stopped"

    synth = user.run(
        f"bot series synth --out data/week.csv --tokens APT,USDC --step 1h {' '.join(WEEK)}"
    )
    assert "data/week.csv" in synth.stdout
    for name, plugin in (("my-dca", "my-dca (recurring_dca)"), ("steady_buyer", "steady_buyer")):
        report = user.run(f"bot backtest --strategy {name} --prices data/week.csv {' '.join(WEEK)}")
        assert f"strategy                   {plugin}" in report.stdout
        assert "ticks / actions / refused  169 / " in report.stdout


def test_shell_completion_of_the_installed_command(tmp_path: Path) -> None:
    """`bot --show-completion` prints a bash script whose completer names the verbs."""
    script = Path(sys.executable).parent / "bot"
    shown = subprocess.run(
        [str(script), "--show-completion", "bash"],
        capture_output=True,
        text=True,
        # Typer's own switch: the shell named here, not guessed from the processes above
        # (a run with no shell among them, e.g. under nohup, guessed none and failed).
        env=clean_env(_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1"),
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "_BOT_COMPLETE=complete_bash" in shown.stdout
    for words, cword, wanted in (("bot stra", 1, "strategies"), ("bot strategies n", 2, "new")):
        completed = subprocess.run(
            [str(script)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=clean_env(_BOT_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(cword)),
            check=False,
        )
        assert completed.stdout.split() == [wanted], completed.stderr
