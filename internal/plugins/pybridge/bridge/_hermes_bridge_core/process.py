"""One plugin process: main() (a plugin's bridge, or the fork server), and what it
sets up around the bridge: the process-group sentinel and the stall dump."""

import os
import sys

from .bridge import Bridge

# The unpacked bridge directory, which holds this package and the compat shims.
_BRIDGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_SENTINEL_FD = None


def _start_group_sentinel(fd_in, fd_out):
    """Start a tiny process that kills this plugin's process group once the bridge is gone.

    hermes kills the group itself whenever it stops a plugin or sees it exit. When hermes
    is killed outright (SIGKILL, the OOM killer), the kernel kills the bridge
    (PR_SET_PDEATHSIG) but not what the plugin spawned, which would live on as orphans.
    The sentinel, a shell in our group, reads a pipe whose only writer is the bridge:
    end of file means the bridge has exited, however it went, and the sentinel then
    kills the rest of the group, itself included. Costs about a millisecond at start.
    """
    global _SENTINEL_FD
    spawn = getattr(os, "posix_spawn", None)
    if spawn is None or os.getpgrp() != os.getpid() or not os.path.exists("/bin/sh"):
        return  # only the leader of its own group may signal the group
    try:
        r, w = os.pipe()  # not inheritable: exec'd descendants never hold the write end
    except OSError:
        return
    try:
        spawn("/bin/sh", ["hermes-plugin-sentinel", "-c", "read x; kill -9 0"], os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, r, 0),
            # Hold nothing the host waits on: its protocol pipes, stdout, stderr.
            (os.POSIX_SPAWN_CLOSE, fd_in),
            (os.POSIX_SPAWN_CLOSE, fd_out),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ])
    except OSError:
        os.close(w)
        return
    finally:
        os.close(r)
    _SENTINEL_FD = w
    if hasattr(os, "register_at_fork"):
        # A plugin's forked (not exec'd) children must not keep the sentinel waiting.
        os.register_at_fork(after_in_child=_close_sentinel_fd)


def _close_sentinel_fd():
    global _SENTINEL_FD
    if _SENTINEL_FD is not None:
        try:
            os.close(_SENTINEL_FD)
        except OSError:
            pass
        _SENTINEL_FD = None


def _arm_stall_dump():
    """With HERMES_DEBUG_STALL set, SIGUSR2 writes every thread's stack to
    $HERMES_HOME/logs/stall-<pid>.txt: hermes asks for it when a call goes unanswered."""
    value = os.environ.get("HERMES_DEBUG_STALL", "")
    if value.strip().lower() not in ("1", "true", "yes", "on") and not os.path.isabs(value):
        return  # the same rule as hermes' (a true value, or a report directory)
    try:
        import faulthandler
        import signal

        home = os.environ.get("HERMES_HOME")
        if home:
            logs = os.path.join(home, "logs")
        elif os.path.isabs(value):
            logs = value  # no home (a bare test host): the report directory itself
        else:
            return  # never into the working directory
        os.makedirs(logs, exist_ok=True)
        out = open(os.path.join(logs, "stall-%d.txt" % os.getpid()), "w")
        faulthandler.register(signal.SIGUSR2, file=out, all_threads=True)
    except Exception:  # noqa: BLE001 - a debugging aid must never stop a plugin
        pass


def main():
    ctl = os.environ.get("HERMES_BRIDGE_FORKSERVER")
    if ctl:
        del os.environ["HERMES_BRIDGE_FORKSERVER"]
        from . import forkserver  # only the fork server needs it

        return forkserver.serve(int(ctl), main)
    fd_in = int(os.environ.get("HERMES_PLUGIN_FD_IN", "-1"))
    fd_out = int(os.environ.get("HERMES_PLUGIN_FD_OUT", "-1"))
    if fd_in < 0 or fd_out < 0 or os.environ.get("HERMES_PLUGIN_MAGIC_COOKIE") != "hermes-plugin-v1-7d3f0b2a":
        sys.stderr.write("This program is a hermes plugin host bridge; it is started by `hermes`, not by hand.\n")
        return 2
    _start_group_sentinel(fd_in, fd_out)
    compat = os.path.join(_BRIDGE_DIR, "_hermes_compat")
    if os.path.isdir(compat):
        sys.path.append(compat)
    _arm_stall_dump()
    rfile = os.fdopen(fd_in, "rb", buffering=1 << 16)
    wfile = os.fdopen(fd_out, "wb", buffering=0)
    bridge = Bridge(rfile, wfile)
    bridge.primary()
    return 0
