"""The fork server: one interpreter that has imported the bridge forks a child per
plugin, so a plugin start costs a fork instead of an interpreter start.

Starting an interpreter costs tens of milliseconds of CPU (more with a heavy site
setup); with many plugins enabled that dominates every hermes command. The host can
instead start one fork server per interpreter: it imports the bridge once, then
forks one child per plugin. Each child is a separate process in its own process
group, exactly like an exec'd bridge; only the start-up is shared.

Control channel: a SOCK_SEQPACKET socket on fd HERMES_BRIDGE_FORKSERVER. The host
sends {"id", "env", "cwd"} with four descriptors attached (protocol in, protocol
out, stdout, stderr); the server answers {"spawned": id, "pid"} (or "error"), and
reports every exit as {"exited": pid, "code"} or {"exited": pid, "signal"}, after
killing what the child left in its process group. When env names a cgroup
(HERMES_BRIDGE_CGROUP), the child moves itself into it before anything else runs,
so whatever the plugin starts is in that cgroup too.
"""

import json
import os
import traceback

_PR_SET_PDEATHSIG = 1


def _die_with_parent(libc):
    if libc is not None:
        try:
            libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)  # SIGKILL when our parent goes
        except Exception:
            pass


def serve(ctl_fd, plugin_main):
    """Serve the host's spawn requests on ctl_fd; each child runs plugin_main()."""
    import signal
    import socket
    import select
    import array

    # What a plugin process may import later is imported here once, shared by
    # every child.
    from . import cli_io  # noqa: F401

    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
    except Exception:
        libc = None
    host_pid = os.getppid()
    _die_with_parent(libc)
    if os.getppid() != host_pid:
        return 0
    sock = socket.socket(fileno=ctl_fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    children = set()

    def send(obj):
        try:
            sock.send(json.dumps(obj).encode("utf-8"))
        except OSError:
            pass

    def reap():
        while True:
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if info is None or not info.si_pid:
                return
            pid = info.si_pid
            # A zombie keeps its pid: the group cannot have been reused yet.
            try:
                os.killpg(pid, 9)
            except OSError:
                pass
            try:
                _, status = os.waitpid(pid, 0)
            except ChildProcessError:
                continue
            children.discard(pid)
            if os.WIFSIGNALED(status):
                send({"exited": pid, "signal": os.WTERMSIG(status)})
            else:
                send({"exited": pid, "code": os.WEXITSTATUS(status)})

    fd_size = array.array("i").itemsize
    # Children share the server's memory copy-on-write; keep the collector from
    # touching (and so copying) every page of it in each child.
    import gc

    gc.freeze()
    send({"ready": True, "pid": os.getpid()})
    while True:
        try:
            readable, _, _ = select.select([sock, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in readable:
            try:
                os.read(wake_r, 512)
            except OSError:
                pass
            reap()
        if sock not in readable:
            continue
        try:
            data, anc, _flags, _addr = sock.recvmsg(1 << 20, socket.CMSG_SPACE(8 * fd_size))
        except InterruptedError:
            continue
        if not data:
            # The host is gone or done with us: take the plugins down and leave.
            for pid in list(children):
                try:
                    os.killpg(pid, 9)
                except OSError:
                    pass
            return 0
        fds = []
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                a = array.array("i")
                a.frombytes(payload[: len(payload) - (len(payload) % fd_size)])
                fds.extend(a)
        try:
            req = json.loads(data)
        except ValueError:
            req = {}
        rid = req.get("id")
        if len(fds) != 4:
            for fd in fds:
                os.close(fd)
            send({"spawned": rid, "error": "expected 4 descriptors, got %d" % len(fds)})
            continue
        try:
            pid = os.fork()
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            send({"spawned": rid, "error": "fork failed: %s" % exc})
            continue
        if pid == 0:
            code = 70
            try:
                code = _child(req, fds, libc, [sock.fileno(), wake_r, wake_w], plugin_main)
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code if isinstance(code, int) else 0)
        for fd in fds:
            os.close(fd)
        children.add(pid)
        send({"spawned": rid, "pid": pid})


def _child(req, fds, libc, server_fds, plugin_main):
    import signal

    server_pid = os.getppid()
    os.setpgid(0, 0)
    _die_with_parent(libc)
    if os.getppid() != server_pid:
        return 0
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    import fcntl

    # Move the received descriptors out of the way, then onto 0-4.
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in fds]
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(high[2], 1)
    os.dup2(high[3], 2)
    os.dup2(high[0], 3)
    os.dup2(high[1], 4)
    keep = {0, 1, 2, 3, 4}
    for fd in set(high + fds + server_fds + [null]):
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    env = req.get("env") or {}
    cgroup = env.pop("HERMES_BRIDGE_CGROUP", None)
    if cgroup:
        try:
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write("0")
        except OSError as exc:
            os.write(2, ("hermes: the plugin process could not join its cgroup %s: %s\n" % (cgroup, exc)).encode())
            return 70
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    if req.get("cwd"):
        os.chdir(req["cwd"])
    # sys.stdout/stderr already write to fds 1 and 2, now the plugin's pipes.
    return plugin_main()
