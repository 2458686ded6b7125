"""A plugin CLI command (cli.run): its argparse run, and its stdin, stdout and getpass,
which go through hermes' own terminal."""

import sys

_PROMPT_MARK = "\x00hermes-prompt"  # protocol.PromptMark


class _CLIStdout:
    """sys.stdout while a CLI command runs: whole lines go straight out; the text
    after the last line break waits, so that input() can hand it to hermes as the
    prompt (shown without a line break, in order with the other lines)."""

    def __init__(self, real):
        self._real = real
        self._partial = ""

    def write(self, s):
        head, sep, tail = (self._partial + s).rpartition("\n")
        if sep:
            self._real.write(head + sep)
        self._partial = tail
        return len(s)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        self._real.flush()

    def prompt(self):
        text, self._partial = self._partial, ""
        if text:
            self._real.write(text + _PROMPT_MARK + "\n")
            self._real.flush()

    def finish(self):
        if self._partial:
            self._real.write(self._partial)
            self._partial = ""
        self._real.flush()

    def isatty(self):
        return False

    def __getattr__(self, name):
        return getattr(self._real, name)


def _patch_getpass(bridge):
    """While a CLI command runs, getpass reads hermes' standard input with the
    terminal's echo off. The plugin has no terminal of its own (its session has
    none), so getpass.getpass, also when imported by name before, ends in
    fallback_getpass, which is looked up when called: replacing it covers both.
    Returns what undoes the patch."""
    import getpass

    def read_secret(prompt="Password: ", stream=None):
        stream = stream or sys.stderr
        stream.write(prompt + _PROMPT_MARK + "\n")
        stream.flush()
        line = bridge.call("ctx.cli_stdin", {"secret": True}) or ""
        if not line:
            raise EOFError("standard input ended before the secret was read")
        return line[:-1] if line.endswith("\n") else line

    def hermes_getpass(prompt="Password: ", stream=None):
        secret = read_secret(prompt, stream)
        (stream or sys.stderr).write("\n")  # the Enter the terminal did not echo
        return secret

    saved = getpass.getpass, getpass.fallback_getpass
    getpass.getpass, getpass.fallback_getpass = hermes_getpass, read_secret

    def restore():
        getpass.getpass, getpass.fallback_getpass = saved

    return restore


class _CLIStdin:
    """sys.stdin while a CLI command runs: lines of hermes' standard input."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, bridge, out):
        self._bridge = bridge
        self._out = out
        self._eof = False
        self._buf = ""  # what read(size) took beyond size

    def _next_line(self):
        if self._buf:
            line, self._buf = self._buf, ""
            return line
        if self._eof:
            return ""
        self._out.prompt()
        line = self._bridge.call("ctx.cli_stdin", {}) or ""
        if not line:
            self._eof = True
        return line

    def readline(self, size=-1):
        line = self._next_line()
        if 0 <= size < len(line):
            line, self._buf = line[:size], line[size:]
        return line

    def read(self, size=-1):
        data = ""
        while size < 0 or len(data) < size:
            line = self._next_line()
            if not line:
                break
            data += line
        if 0 <= size < len(data):
            data, self._buf = data[:size], data[size:]
        return data

    def readlines(self, hint=-1):
        return list(iter(self.readline, ""))

    def __iter__(self):
        return iter(self.readline, "")

    def isatty(self):
        return False

    def readable(self):
        return True

    def fileno(self):
        import io
        raise io.UnsupportedOperation("fileno: a plugin CLI command reads hermes' input through the host")

    def close(self):
        pass


def run_command(bridge, params, rid):
    """cli.run: parse argv with the plugin's argparse set-up and run its handler, with
    sys.stdin and sys.stdout (and getpass) going through hermes."""
    import argparse

    parser = argparse.ArgumentParser(
        prog=params.get("prog") or "hermes",
        description=params.get("description") or params.get("help") or None,
    )
    setup = params.get("setup_handle")
    if setup:
        bridge.callable_for(setup)(parser)
    handler = params.get("handler_handle")
    if handler:
        parser.set_defaults(func=bridge.callable_for(handler))
    real_in, real_out = sys.stdin, sys.stdout
    out = _CLIStdout(real_out)
    sys.stdout, sys.stdin = out, _CLIStdin(bridge, out)
    restore_getpass = _patch_getpass(bridge)
    try:
        ns = parser.parse_args(params.get("argv") or [])
        func = getattr(ns, "func", None)
        if func is None:
            parser.print_help()
            code = 0
        else:
            rc = bridge.run_maybe_async(func(ns), rid)
            code = rc if isinstance(rc, int) and not isinstance(rc, bool) else 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            sys.stderr.write("%s\n" % (exc.code,))
    finally:
        restore_getpass()
        sys.stdin, sys.stdout = real_in, real_out
        out.finish()
    sys.stdout.flush()
    sys.stderr.flush()
    return {"exit_code": code}
