# hermes scanner v2: what a Python plugin does (internal/scan/python.go runs this).
# Stdlib only. Input on stdin, fields framed as "<byte length>\n<UTF-8 bytes>": the number
# of declared requires_env names and each name, then path and source per file (parsed as
# it arrives, while the Go side still scans); the analysis runs at end of input. Output
# on stdout, one JSON object: {"findings", "strings", "notes", "data"}. Neither side of
# the exchange needs the json module (it imports re, and the two are a third of this
# script's start-up); re is imported on first use.
# The plugin is never imported or run: its files are parsed with ast and walked by a
# small abstract interpreter that folds constants, resolves imports and aliases and
# follows taint (secret sources to network sinks) through assignments, returns,
# attributes and the plugin's own imports.
import sys

try:
    import resource
    _mem = int(sys.argv[-1]) if len(sys.argv) > 1 else 768 << 20
    resource.setrlimit(resource.RLIMIT_AS, (_mem, _mem))
    resource.setrlimit(resource.RLIMIT_CPU, (30, 30))
except Exception:  # no resource module (not Linux): the Go side's time cap still holds
    pass

import _ast as ast  # the node classes; ast.py itself would import contextlib and collections, a third of start-up
class posixpath:
    """posixpath's join, dirname and basename for str paths, which is all the analysis
    folds: importing posixpath imports os, ~1 ms of a start that -I -S keeps free of it."""

    @staticmethod
    def join(a, *p):
        path = a
        for b in p:
            if b.startswith("/"):
                path = b
            elif not path or path.endswith("/"):
                path += b
            else:
                path += "/" + b
        return path

    @staticmethod
    def dirname(p):
        head = p[:p.rfind("/") + 1]
        if head and head != "/" * len(head):
            head = head.rstrip("/")
        return head

    @staticmethod
    def basename(p):
        return p[p.rfind("/") + 1:]


class _LazyRe:
    """re, imported the first time the analysis needs a regular expression (a path or
    command to classify): re pulls in enum, functools and collections, ~5 ms of a
    start that is ~6 ms without it, and a plugin that opens no file runs none."""

    def __getattr__(self, name):
        global re
        _RELAX[0] = True
        try:
            import re as m
        finally:
            _RELAX[0] = False
        re = m
        return getattr(m, name)


re = _LazyRe()


def _parse(source, filename="<unknown>"):
    return compile(source, filename, "exec", ast.PyCF_ONLY_AST)


def _iter_child_nodes(node):
    for name in node._fields:
        field = getattr(node, name, None)
        if isinstance(field, ast.AST):
            yield field
        elif isinstance(field, list):
            for item in field:
                if isinstance(item, ast.AST):
                    yield item


def _walk(node):
    # Breadth first, as ast.walk.
    todo = [node]
    i = 0
    while i < len(todo):
        n = todo[i]
        i += 1
        todo.extend(_iter_child_nodes(n))
        yield n


ast.parse, ast.iter_child_nodes, ast.walk = _parse, _iter_child_nodes, _walk
import encodings.latin_1, encodings.ascii, encodings.utf_8  # noqa: E401,F401

_BLOCK = ("socket.", "subprocess.", "os.system", "os.exec", "os.posix_spawn", "os.fork", "ctypes.", "import",
          "open", "os.spawn", "shutil.", "os.remove", "os.rename", "urllib.")


_RELAX = [False]  # while _decoders imports the stdlib decoders (our own import statements only)


def _audit(event, args):
    # Nothing past start-up may open a file, a socket or a process, or import a module:
    # the input is hostile and this script must stay a pure function of it.
    if _RELAX[0]:
        return
    for b in _BLOCK:
        if event == b or event.startswith(b):
            raise RuntimeError("blocked by the scanner sandbox: " + event)


sys.addaudithook(_audit)
sys.setrecursionlimit(12000)

MAXS = 1 << 16        # longest folded constant
MAXSEQ = 4096         # longest folded sequence
MAXZ = 1 << 20        # most bytes one decompression may yield
MAXDEPTH = 1000       # deepest expression evaluated
MAXEXEC = 3           # exec'd strings analysed this many levels deep
BUDGET = [3000000]    # expression evaluations for the whole run
NOC = object()
EMPTY = frozenset()


class Limit(Exception):
    pass


class V:
    __slots__ = ("c", "q", "t", "dec", "hid", "fn", "mod", "cls", "inst", "recv", "part")

    def __init__(s, c=NOC, q=None, t=EMPTY, dec=None, hid=False, fn=None, mod=None, cls=None, inst=None,
                 recv=None, part=False):
        s.c, s.q, s.t, s.dec, s.hid, s.fn, s.mod, s.cls, s.inst, s.recv, s.part = \
            c, q, t, dec, hid, fn, mod, cls, inst, recv, part


UNK = V()


_DEC = []


def _decoders():
    """base64, binascii, zlib, codecs (with the codecs decode() looks up), imported
    the first time a plugin decodes a constant: most plugins never do, and these
    imports are a sixth of the script's start-up."""
    if not _DEC:
        _RELAX[0] = True
        try:
            import base64, binascii, zlib, codecs  # noqa: E401
            import encodings.rot_13, encodings.hex_codec, encodings.base64_codec  # noqa: E401,F401
            import encodings.zlib_codec, encodings.unicode_escape  # noqa: E401,F401
        finally:
            _RELAX[0] = False
        _DEC.extend((base64, binascii, zlib, codecs))
    return _DEC


def cp(v, **kw):
    """A copy of v with some fields changed (values are shared between scopes: never mutate one)."""
    n = V(c=v.c, q=v.q, t=v.t, dec=v.dec, hid=v.hid, fn=v.fn, mod=v.mod, cls=v.cls, inst=v.inst, recv=v.recv, part=v.part)
    for k, x in kw.items():
        setattr(n, k, x)
    return n


def tj(*vs):
    t = EMPTY
    for v in vs:
        if v is not None and v.t:
            t = t | v.t
    return t


def isstr(v):
    return v.c is not NOC and isinstance(v.c, (str, bytes)) and not v.part


def text(c):
    if isinstance(c, bytes):
        return c.decode("utf-8", "replace")
    return c


def pstr(v):
    """The value as a (possibly partial) path or text: unknown parts are '*'."""
    if v.c is not NOC and isinstance(v.c, (str, bytes)):
        return text(v.c)
    return "*"


def fmt_star(t):
    """re.sub(r"%[-#0 +]*\\d*(\\.\\d+)?[sdrxXoifeEgGc]", "*", t) without re (a % format of unknown
    values is common in plain code): each conversion becomes '*'. Greedy is exact here: no
    flag or digit can end a conversion, so the regex could never backtrack to a match."""
    out, i, n = [], 0, len(t)
    while True:
        j = t.find("%", i)
        if j < 0:
            out.append(t[i:])
            return "".join(out)
        k = j + 1
        while k < n and t[k] in "-#0 +":
            k += 1
        while k < n and t[k].isdecimal():  # \d of a str pattern: Unicode category Nd
            k += 1
        if k + 1 < n and t[k] == "." and t[k + 1].isdecimal():
            k += 2
            while k < n and t[k].isdecimal():
                k += 1
        if k < n and t[k] in "sdrxXoifeEgGc":
            out.append(t[i:j])
            out.append("*")
            i = k + 1
        else:
            out.append(t[i:j + 1])
            i = j + 1


def norm(p):
    p = p.replace("\\", "/")
    p = re.sub(r"^(?:/home/[^/]+|/root|/Users/[^/]+|\$HOME|\$\{HOME\}|%USERPROFILE%)(?=/|$)", "~", p)
    p = re.sub(r"/+", "/", p)
    return p


SECRET_PATHS = [
    (r"(^|/)\.aws(/|$)", "AWS credentials"), (r"\.netrc$", "~/.netrc"), (r"\.git-credentials$", "git credentials"),
    (r"(^|/)\.ssh(/|$)", "SSH keys"), (r"(^|/)id_(rsa|dsa|ecdsa|ed25519)", "SSH keys"), (r"\.gnupg(/|$)", "GnuPG keys"),
    (r"\.kube/config", "Kubernetes credentials"), (r"\.docker/config\.json", "Docker credentials"),
    (r"\.pgpass$", "~/.pgpass"), (r"\.npmrc$", "~/.npmrc"), (r"\.pypirc$", "~/.pypirc"),
    (r"\.config/gh/hosts\.ya?ml", "GitHub CLI token"), (r"\.config/gcloud", "Google Cloud credentials"),
    (r"(^|/)\.azure(/|$)", "Azure credentials"), (r"(^|/)(Cookies|Login Data|Web Data|Local State)$", "browser store"),
    (r"cookies\.sqlite|logins\.json|key[34]\.db|signons\.sqlite", "browser store"),
    (r"\.mozilla/firefox|google-chrome|chromium|BraveSoftware|Application Support/Google/Chrome", "browser profile"),
    (r"keyrings?(/|$)|\.keychain", "keyring"), (r"\.hermes/(profiles/[^/]+/)?\.env$", "hermes .env"),
    (r"^~/.*\.env$", "a .env file"), (r"^/etc/shadow$", "/etc/shadow"), (r"\.hermes/auth\.json$", "hermes auth"),
]
PERSIST_PATHS = [
    (r"authorized_keys2?$", "SSH authorized_keys"),
    (r"(^|/)\.(bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|zlogin|bash_aliases|kshrc|cshrc|tcshrc)$",
     "a shell start-up file"),
    (r"\.config/fish/config\.fish$", "a shell start-up file"), (r"crontab|/var/spool/cron|/etc/cron", "crontab"),
    (r"systemd/user/|/etc/systemd/", "a systemd unit"), (r"\.config/autostart/", "desktop autostart"),
    (r"Launch(Agents|Daemons)/", "a launchd job"), (r"^/etc/(rc\.local|profile\.d/|init\.d/|sudoers)", "system start-up"),
    (r"\.ssh/(rc|config)$", "SSH client start-up"),
]
HERMES_CFG = r"(^|/)\.hermes/(profiles/[^/]+/)?(config\.ya?ml|\.env)$"
# The environment names taken for secrets: re.search("(KEY|TOKEN|...)", name, re.I) without
# re. Each character that re.I matches to one of the words' letters becomes that letter
# (ASCII lower case, and the non-ASCII ones re.I folds: İ ı to I, K to K, ſ to S).
SECRET_ENV_WORDS = ("KEY", "TOKEN", "SECRET", "PASSW", "CREDENTIAL", "AUTH", "SESSION", "COOKIE", "PRIVATE", "AWS_")
_FOLD_UPPER = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}
_FOLD_UPPER.update({0x130: ord("I"), 0x131: ord("I"), 0x212A: ord("K"), 0x17F: ord("S")})


def secret_env(name):
    u = name.translate(_FOLD_UPPER)
    return any(w in u for w in SECRET_ENV_WORDS)


def classify(p, table):
    for rx, label in table:
        if re.search(rx, p):
            return label
    return None


NET_MODS = ("requests", "httpx", "urllib.request", "urllib3", "http.client", "aiohttp", "socket", "smtplib",
            "ftplib", "dns.resolver", "websocket", "websockets", "xmlrpc.client", "paramiko", "pycurl", "telnetlib")
DNS = ("socket.gethostbyname", "socket.gethostbyname_ex", "socket.getaddrinfo", "socket.gethostbyaddr")
NOT_NET = ("socket.gethostname", "socket.inet_", "socket.htons", "socket.ntohs", "urllib.request.pathname2url")
CODE_EXEC = ("exec", "eval", "compile", "builtins.exec", "builtins.eval", "builtins.compile")
CMD_EXEC = ("os.system", "os.popen", "subprocess.", "os.exec", "os.spawn", "os.posix_spawn", "pty.spawn",
            "asyncio.create_subprocess_shell", "asyncio.create_subprocess_exec", "commands.getoutput")
DELETE = ("shutil.rmtree", "os.remove", "os.unlink", "os.rmdir", "os.removedirs", "pathlib.Path().unlink",
          "pathlib.Path().rmdir")
OPENERS = ("open", "io.open", "builtins.open", "codecs.open", "pathlib.Path().open", "os.open")
DECODERS = {
    "base64.b64decode": "base64", "base64.standard_b64decode": "base64", "base64.urlsafe_b64decode": "base64",
    "base64.decodebytes": "base64", "base64.decodestring": "base64", "base64.b32decode": "base32",
    "base64.b16decode": "base16", "base64.a85decode": "ascii85", "base64.b85decode": "base85",
    "binascii.a2b_base64": "base64", "binascii.unhexlify": "hex", "binascii.a2b_hex": "hex", "bytes.fromhex": "hex",
    "bytearray.fromhex": "hex", "zlib.decompress": "zlib", "gzip.decompress": "gzip", "marshal.loads": "marshal",
    "pickle.loads": "pickle", "bz2.decompress": "bz2", "lzma.decompress": "lzma",
}
CODECS = {"rot13": "rot13", "rot_13": "rot13", "hex": "hex", "hex_codec": "hex", "base64": "base64",
          "base64_codec": "base64", "zlib": "zlib", "zlib_codec": "zlib", "unicode_escape": "unicode_escape",
          "utf-8": None, "utf8": None, "ascii": None, "latin-1": None, "latin1": None}
BUILTINS = {"exec", "eval", "compile", "open", "__import__", "getattr", "chr", "ord", "bytes", "bytearray", "str",
            "map", "reversed", "globals", "vars", "int", "hex", "list", "tuple", "join", "sorted", "len", "print",
            "setattr", "dict", "locals", "__builtins__", "builtins", "any", "all", "set", "frozenset", "filter",
            "isinstance", "enumerate", "zip", "min", "max", "sum", "bool", "repr", "iter", "next", "hash", "range"}


# Calls a deny-list may reach and stay data: matching and building text or sets.
MATCH_CALLS = {
    "any", "all", "len", "sorted", "set", "frozenset", "list", "tuple", "map", "filter", "str", "isinstance",
    "enumerate", "zip", "min", "max", "sum", "bool", "repr", "iter", "next", "reversed", "dict", "hash", "range",
    "re.compile", "re.escape", "re.search", "re.match", "re.fullmatch", "re.findall", "re.finditer", "re.split",
    "re.sub", "re.subn", "fnmatch.fnmatch", "fnmatch.fnmatchcase", "fnmatch.filter", "fnmatch.translate",
    "shlex.split", "os.path.basename", "os.path.normpath", "unicodedata.normalize",
}
MATCH_METHODS = {
    "search", "match", "fullmatch", "findall", "finditer", "lower", "upper", "casefold", "strip", "lstrip", "rstrip",
    "startswith", "endswith", "find", "rfind", "index", "count", "split", "rsplit", "join", "replace", "format",
    "encode", "decode", "__contains__", "get", "issubset", "issuperset", "isdisjoint", "intersection", "union",
    "difference", "keys", "values", "items", "copy",
}
RE_FUNCS = {"re.compile", "re.search", "re.match", "re.fullmatch", "re.findall", "re.finditer", "re.split", "re.sub",
            "re.subn"}
GROW_METHODS = {"append", "add", "extend", "update", "insert"}
# What reaches names at run time, past the analysis (globals()["X"], exec of text,
# importlib): a plugin using any of it gets no deny-list judgement at all.
DYN_NAMES = {"globals", "vars", "locals", "eval", "exec", "compile", "execfile", "__import__", "__builtins__",
             "breakpoint", "getattr", "setattr", "delattr"}
DYN_ATTRS = {"__dict__", "__globals__", "modules", "f_globals", "f_locals", "__code__", "__builtins__"}
DYN_MODS = {"importlib", "builtins", "inspect", "ctypes", "pickle", "marshal", "code", "codeop", "runpy", "gc"}
FUNCS = []  # every function seen (nested ones are entry points: Analyzer.run)


def dynamic(tree):
    plain = set()  # getattr(obj, "literal") is plain attribute access
    for x in ast.walk(tree):
        if isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id in ("getattr", "setattr", "delattr") \
                and len(x.args) >= 2 and isinstance(x.args[1], ast.Constant):
            plain.add(id(x.func))
    for x in ast.walk(tree):
        if isinstance(x, ast.Name) and x.id in DYN_NAMES and id(x) not in plain:
            return True
        if isinstance(x, ast.Attribute) and x.attr in DYN_ATTRS:
            return True
        if isinstance(x, ast.Import) and any(a.name.split(".")[0] in DYN_MODS for a in x.names):
            return True
        if isinstance(x, ast.ImportFrom) and (x.module or "").split(".")[0] in DYN_MODS:
            return True
    return False


def inq(q, prefixes):
    if q is None:
        return False
    for p in prefixes:
        if q == p or (p.endswith(".") and q.startswith(p)) or q.startswith(p + "."):
            return True
    return False


def is_net(q):
    return q is not None and inq(q, NET_MODS) and not inq(q, NOT_NET) and not q.endswith("()")


def net_kind(q):
    if inq(q, DNS) or q.startswith("dns."):
        return "sent by DNS lookup"
    if q.startswith("socket"):
        return "sent over a raw socket"
    if q.startswith("smtplib"):
        return "sent by mail"
    if q.startswith(("ftplib", "paramiko", "telnetlib")):
        return "sent to a remote host"
    return "sent over HTTP"


class Func:
    def __init__(s, node, mod, cls=None, closure=None):
        s.node, s.mod, s.cls, s.closure = node, mod, cls, closure
        s.name = getattr(node, "name", "<lambda>")
        a = node.args
        s.params = [x.arg for x in getattr(a, "posonlyargs", [])] + [x.arg for x in a.args]
        if a.vararg:
            s.params.append(a.vararg.arg)
        s.params += [x.arg for x in a.kwonlyargs]
        if a.kwarg:
            s.params.append(a.kwarg.arg)
        s.summary = None  # (return V, [(param index, sink)])
        s.pesc = frozenset()  # parameters that reach a call other than matching (deny-lists)
        s.pmatch = frozenset()  # parameters matched against
        s.busy = False
        if FUNCS is not None:
            FUNCS.append(s)


class Cls:
    def __init__(s, name, mod):
        s.name, s.mod, s.attrs = name, mod, {}


class Mod:
    def __init__(s, name, path, tree, lines):
        s.name, s.path, s.tree, s.lines, s.g, s.state = name, path, tree, lines, {}, 0


class Frame:
    def __init__(s, mod, fn=None, local=None, depth=0, line=None):
        s.mod, s.fn, s.local, s.depth, s.line = mod, fn, local, depth, line
        s.ret, s.globals_decl, s.psinks, s.pesc, s.pmatch = None, set(), [], set(), set()


class Analyzer:
    def __init__(s, declared):
        s.declared = {d.upper() for d in declared}
        s.mods, s.by_path = {}, {}
        s.findings, s.strings, s.notes = [], [], []
        s.seen_f, s.seen_s = set(), set()
        s.depth = 0
        s.capped = set()
        s.specialised, s.spec_depth = set(), 0
        s.lits, s.lit_used, s.lit_matched, s.dynamic, s.incomplete = [], set(), set(), False, False
        s.cross_written = set()  # modules whose globals another module assigned (state.x = ...)

    # ---- output -------------------------------------------------------------
    def line_of(s, fr, n):
        return fr.line or getattr(n, "lineno", 0)

    def match(s, mod, line):
        if 0 < line <= len(mod.lines):
            return mod.lines[line - 1].strip()[:120]
        return ""

    def find(s, fr, n, pid, sev, cat, desc):
        line = s.line_of(fr, n)
        key = (pid, fr.mod.path, line)
        if key in s.seen_f:
            return
        s.seen_f.add(key)
        s.findings.append({"id": pid, "sev": sev, "cat": cat, "file": fr.mod.path, "line": line,
                           "match": s.match(fr.mod, line), "desc": desc})

    def emit_string(s, fr, n, val, how, kind):
        t = text(val)
        if not t or len(s.strings) >= 512:
            return
        key = (fr.mod.path, t, kind)
        if key in s.seen_s:
            return
        s.seen_s.add(key)
        s.strings.append({"file": fr.mod.path, "line": s.line_of(fr, n), "text": t[:MAXS], "how": how, "kind": kind})

    def where(s, fr, n):
        return "%s:%d" % (fr.mod.path, s.line_of(fr, n))

    # ---- deny-lists ---------------------------------------------------------
    # A string literal that only ever serves matching (a guard's deny-list: a
    # collection tested with `in`, joined into a regex, compiled) is data, and the
    # line rules' findings on it are dropped (python.go). Literals are labelled with
    # taint like secrets; a label that reaches any call other than matching and text
    # building (or an outside object) marks the literal used. The answer is given only
    # when the whole plugin was followed and nothing reaches names dynamically.
    def lit(s, fr, n, elts, used_ok=False):
        lid = len(s.lits)
        spans = [(e.lineno, e.col_offset, e.end_col_offset) for e in elts
                 if getattr(e, "end_lineno", None) == e.lineno]  # one-line strings only
        s.lits.append((fr.mod.path, spans))
        if used_ok:
            s.lit_matched.add(lid)
            return EMPTY
        return frozenset([("lit", lid, fr.mod.path, getattr(n, "lineno", 0), ())])

    def matched(s, fr, t):
        for lab in t:
            if lab[0] == "lit":
                s.lit_matched.add(lab[1])
            elif lab[0] == "param":
                fr.pmatch.add(lab[1])

    def escape(s, fr, t):
        for lab in t:
            if lab[0] == "lit":
                s.lit_used.add(lab[1])
            elif lab[0] == "param":
                fr.pesc.add(lab[1])

    def matching_call(s, n, q):
        if q in MATCH_CALLS or (q or "").startswith(("re.compile().", "logging.")):
            return True
        if isinstance(n.func, ast.Attribute):
            m = n.func.attr
            if m in MATCH_METHODS and (q is None or q.startswith("$.")):
                return True
            # buf.append(word): the label moves onto buf (taint_name), so it is followed.
            if m in GROW_METHODS and isinstance(n.func.value, ast.Name) and (q is None or q.startswith("$.")):
                return True
        return False

    def data_strings(s):
        if s.dynamic or s.incomplete:
            return []
        by = {}
        for lid, (path, spans) in enumerate(s.lits):
            if lid in s.lit_used or lid not in s.lit_matched:
                continue
            for (ln, c0, c1) in spans:
                by.setdefault((path, ln), set()).add((c0, c1))
        out = []
        for (path, ln), cols in sorted(by.items()):
            lines = s.by_path[path].nl_lines
            if lines is not None and 0 < ln <= len(lines):
                out.append({"file": path, "line": ln, "text": lines[ln - 1], "cols": sorted(cols)})
        return out

    # ---- modules ------------------------------------------------------------
    def add(s, path, src):
        name = path[:-3] if path.endswith(".py") else path
        name = name.replace("/", ".")
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        elif name == "__init__":
            name = ""
        lines = src.splitlines()
        try:
            tree = ast.parse(src, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as e:
            ln = getattr(e, "lineno", 0) or 0
            msg = getattr(e, "msg", None) or e.__class__.__name__
            s.incomplete = True
            s.notes.append({"id": "py_unparsed", "file": path, "line": ln, "desc": "file does not parse as Python (%s%s); it was judged by the line rules only" % (msg, " at line %d" % ln if ln else "")})
            return
        m = Mod(name, path, tree, lines)
        # Lines as ast counts them (splitlines() also splits at \f, \x1c, U+2028...);
        # a lone CR would make the Go side count differently: no data lines then.
        m.nl_lines = None if "\r" in src.replace("\r\n", "") else [l.rstrip("\r") for l in src.split("\n")]
        s.dynamic = s.dynamic or dynamic(tree)
        s.mods[name] = m
        s.by_path[path] = m

    def find_mod(s, name):
        if name in s.mods:
            return s.mods[name]
        for k, m in s.mods.items():  # flat imports of a nested file ("import paths" for pkg/paths.py)
            if k.endswith("." + name):
                return m
        return None

    def run_mod(s, m):
        if m.state:
            return
        m.state = 1
        fr = Frame(m)
        s.block(fr, m.tree.body)
        m.state = 2

    def stopped_at(s, m):
        s.incomplete = True
        s.notes.append({"id": "py_analysis_incomplete", "file": m.path, "line": 0,
                        "desc": "analysis stopped at its work cap; the plugin is too large or too convoluted to follow fully"})

    def run(s):
        # Files arrive in the order they were read (not fixed); run them in path order
        # so one plugin always gets the same analysis.
        order = sorted(s.mods.values(), key=lambda m: m.path)
        for m in order:
            try:
                s.run_mod(m)
            except Limit:
                s.stopped_at(m)
                return
        # A module that sets another's global (state.loot = secret) may have run after a
        # module that reads it: run the others' top levels once more, now that every such
        # write is in place, so the order of the files decides nothing. (The written
        # modules are not run again: that would reset their globals.)
        if s.cross_written:
            try:
                for m in order:
                    if m.name not in s.cross_written:
                        m.state = 0
                        s.run_mod(m)
            except Limit:
                s.stopped_at(m)
                return
        # Functions nobody calls are entry points (tools, hooks, callbacks): analyse them too.
        try:
            for m in list(s.mods.values()):
                for v in list(m.g.values()):
                    s.summarise_all(v)
            # Nested functions (closures handed to ctx.register_*) are entry points too.
            i = 0
            while i < len(FUNCS):
                s.summary(FUNCS[i])
                i += 1
        except Limit:
            s.incomplete = True
            return

    def summarise_all(s, v):
        if v.fn is not None:
            s.summary(v.fn)
        elif v.cls is not None:
            for a in list(v.cls.attrs.values()):
                if a.fn is not None:
                    s.summary(a.fn)

    # ---- statements ---------------------------------------------------------
    def block(s, fr, body):
        for st in body:
            s.stmt(fr, st)

    def stmt(s, fr, n):
        B = BUDGET
        B[0] -= 1
        if B[0] < 0:
            raise Limit()
        if isinstance(n, ast.Assign):
            v = s.ev(fr, n.value)
            for t in n.targets:
                s.assign(fr, t, v)
        elif isinstance(n, ast.AugAssign):
            v = s.binop(fr, n, s.ev(fr, n.target), n.op, s.ev(fr, n.value))
            s.assign(fr, n.target, v)
        elif isinstance(n, ast.AnnAssign):
            if n.value is not None:
                s.assign(fr, n.target, s.ev(fr, n.value))
        elif isinstance(n, ast.Expr):
            s.ev(fr, n.value)
        elif isinstance(n, ast.Return):
            if n.value is not None:
                v = s.ev(fr, n.value)
                fr.ret = v if fr.ret is None else s.merge(fr.ret, v)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in n.decorator_list:
                s.ev(fr, d)
            s.bind(fr, n.name, V(fn=Func(n, fr.mod, fr.local.get("__cls__").cls if fr.local and "__cls__" in fr.local else None,
                                         fr.local if fr.fn is not None else None)))
        elif isinstance(n, ast.ClassDef):
            for b in n.bases:
                s.ev(fr, b)
            c = Cls(n.name, fr.mod)
            cf = Frame(fr.mod, local=c.attrs, depth=fr.depth, line=fr.line)
            c.attrs["__cls__"] = V(cls=c)
            s.block(cf, n.body)
            s.bind(fr, n.name, V(cls=c))
        elif isinstance(n, ast.Import):
            for a in n.names:
                own = s.find_mod(a.name)
                if own is not None and own is not fr.mod:
                    s.run_mod(own)
                    v = V(mod=own)
                else:
                    v = V(q=a.name)
                if a.asname:
                    s.bind(fr, a.asname, v)
                else:
                    top = a.name.split(".")[0]
                    o = s.find_mod(top)
                    s.bind(fr, top, V(mod=o) if o is not None and o is not fr.mod else V(q=top))
        elif isinstance(n, ast.ImportFrom):
            base = n.module or ""
            if n.level:
                pkg = fr.mod.name.split(".") if fr.mod.name else []
                if not fr.mod.path.endswith("__init__.py"):
                    pkg = pkg[:-1]
                pkg = pkg[: len(pkg) - (n.level - 1)] if n.level > 1 else pkg
                base = ".".join([p for p in pkg + ([base] if base else []) if p])
            own = s.find_mod(base) if (base or n.level) else None
            if own is None and n.level and base == "":
                own = s.mods.get("")
            for a in n.names:
                if a.name == "*":
                    if own is not None and own is not fr.mod:
                        s.run_mod(own)
                        for k, v in own.g.items():
                            s.bind(fr, k, v)
                    continue
                v = None
                sub = s.find_mod((base + "." if base else "") + a.name) if (own is not None or n.level) else None
                if sub is not None and sub is not fr.mod:
                    s.run_mod(sub)
                    v = V(mod=sub)
                elif own is not None and own is not fr.mod:
                    s.run_mod(own)
                    v = own.g.get(a.name, UNK)
                    if v.t:
                        v = V(c=v.c, q=v.q, t=s.step(v.t, "imported by %s" % s.where(fr, n)), dec=v.dec, hid=v.hid,
                              fn=v.fn, mod=v.mod, cls=v.cls, part=v.part)
                elif not n.level:
                    v = V(q=base + "." + a.name)
                s.bind(fr, a.asname or a.name, v or UNK)
        elif isinstance(n, (ast.For, ast.AsyncFor)):
            it = s.ev(fr, n.iter)
            s.assign(fr, n.target, s.element(it, fr, n))
            s.block(fr, n.body)
            s.block(fr, n.body)  # twice: a value assigned late in the body flows to its start
            s.block(fr, n.orelse)
        elif isinstance(n, ast.While):
            s.ev(fr, n.test)
            s.block(fr, n.body)
            s.block(fr, n.body)
            s.block(fr, n.orelse)
        elif isinstance(n, ast.If):
            s.ev(fr, n.test)
            s.block(fr, n.body)
            s.block(fr, n.orelse)
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            for it in n.items:
                v = s.ev(fr, it.context_expr)
                if it.optional_vars is not None:
                    s.assign(fr, it.optional_vars, v)
            s.block(fr, n.body)
        elif isinstance(n, ast.Try) or type(n).__name__ == "TryStar":
            s.block(fr, n.body)
            for h in n.handlers:
                s.block(fr, h.body)
            s.block(fr, n.orelse)
            s.block(fr, n.finalbody)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            fr.globals_decl.update(n.names)
        else:
            for c in ast.iter_child_nodes(n):
                if isinstance(c, ast.stmt):
                    s.stmt(fr, c)
                elif isinstance(c, ast.expr):
                    s.ev(fr, c)

    def bind(s, fr, name, v):
        scope = fr.mod.g if fr.local is None or name in fr.globals_decl else fr.local
        old = scope.get(name)
        if old is not None and old.t and not v.t.issuperset(old.t):
            # Taint is kept across rebinding (branches, loops): conservative.
            v = V(c=v.c, q=v.q, t=v.t | old.t, dec=v.dec, hid=v.hid, fn=v.fn, mod=v.mod, cls=v.cls, inst=v.inst,
                  part=v.part)
        scope[name] = v

    def lookup(s, fr, name):
        if fr.local is not None and name in fr.local and name not in fr.globals_decl:
            return fr.local[name]
        if name in fr.mod.g:
            return fr.mod.g[name]
        if name in BUILTINS:
            return V(q="builtins" if name == "__builtins__" else name)
        return UNK

    def assign(s, fr, t, v):
        if isinstance(t, ast.Name):
            s.bind(fr, t.id, v)
        elif isinstance(t, (ast.Tuple, ast.List)):
            seq = v.c if isinstance(v.c, tuple) and len(v.c) == len(t.elts) else None
            for i, e in enumerate(t.elts):
                if isinstance(e, ast.Starred):
                    e = e.value
                s.assign(fr, e, V(c=seq[i], t=v.t) if seq is not None else V(t=v.t))
        elif isinstance(t, ast.Attribute):
            base = s.ev(fr, t.value)
            if base.q is not None:
                s.escape(fr, v.t)  # into an outside module or object (os.environ, sys.x)
            if base.mod is not None:
                base.mod.g[t.attr] = v
                if base.mod is not fr.mod:
                    s.cross_written.add(base.mod.name)
            elif base.inst is not None or base.cls is not None:
                c = base.inst or base.cls
                old = c.attrs.get(t.attr)
                c.attrs[t.attr] = s.merge(old, v) if old is not None else v
            elif isinstance(t.value, ast.Name) and v.t:
                s.taint_name(fr, t.value.id, v.t)
        elif isinstance(t, ast.Subscript):
            s.ev(fr, t.slice)
            if s.ev(fr, t.value).q is not None:
                s.escape(fr, v.t)
            if isinstance(t.value, ast.Name) and v.t:
                s.taint_name(fr, t.value.id, v.t)
            else:
                s.ev(fr, t.value)
        elif isinstance(t, ast.Starred):
            s.assign(fr, t.value, v)

    def taint_name(s, fr, name, t):
        cur = s.lookup(fr, name)
        if cur.q is not None or cur.mod is not None or cur.fn is not None:
            return
        s.bind(fr, name, V(c=cur.c, t=cur.t | t, dec=cur.dec, part=cur.part, inst=cur.inst))

    def merge(s, a, b):
        if a is None:
            return b
        c = a.c if a.c is not NOC else b.c
        return V(c=c, q=a.q or b.q, t=a.t | b.t, dec=a.dec or b.dec, hid=a.hid or b.hid, fn=a.fn or b.fn,
                 mod=a.mod or b.mod, cls=a.cls or b.cls, inst=a.inst or b.inst, part=a.part or b.part)

    def element(s, it, fr, n):
        if it.q == "os.environ":
            return V(t=it.t | s.env_all(fr, n))
        if isinstance(it.c, (str, bytes)) and it.c in ("~", "~/") and not it.part:
            return V(c="~/*", part=True, t=it.t)
        return V(t=it.t)

    def step(s, t, what):
        out = set()
        for lab in t:
            if lab[0] in ("param", "lit"):
                out.add(lab)
            else:
                out.add(lab[:4] + ((lab[4] + (what,))[-6:],))
        return frozenset(out)

    # ---- expressions --------------------------------------------------------
    def ev(s, fr, n):
        B = BUDGET
        B[0] -= 1
        if B[0] < 0:
            raise Limit()
        s.depth += 1
        try:
            if s.depth > MAXDEPTH:
                if fr.mod.path not in s.capped:
                    s.capped.add(fr.mod.path)
                    s.incomplete = True
                    s.notes.append({"id": "py_expression_cap", "file": fr.mod.path, "line": getattr(n, "lineno", 0),
                                    "desc": "an expression nested deeper than %d levels was not followed (a place to hide a payload from the analysis)" % MAXDEPTH})
                return UNK
            return s.ev1(fr, n)
        finally:
            s.depth -= 1

    def ev1(s, fr, n):
        if isinstance(n, ast.Constant):
            c = n.value
            if isinstance(c, (str, bytes)) and len(c) > MAXS:
                return UNK
            return V(c=c) if isinstance(c, (str, bytes, int, float, bool)) or c is None else UNK
        if isinstance(n, ast.Name):
            return s.lookup(fr, n.id)
        if isinstance(n, ast.Attribute):
            return s.attr(fr, n, s.ev(fr, n.value), n.attr)
        if isinstance(n, ast.Call):
            return s.call(fr, n)
        if isinstance(n, ast.BinOp):
            return s.binop(fr, n, s.ev(fr, n.left), n.op, s.ev(fr, n.right))
        if isinstance(n, ast.JoinedStr):
            parts, vs, dec, part = [], [], None, False
            for p in n.values:
                if isinstance(p, ast.Constant):
                    parts.append(str(p.value))
                    continue
                v = s.ev(fr, p.value if isinstance(p, ast.FormattedValue) else p)
                vs.append(v)
                dec = dec or v.dec
                if v.c is not NOC and isinstance(v.c, (str, int, float)) and not (isinstance(p, ast.FormattedValue) and p.format_spec):
                    parts.append(str(v.c))
                    part = part or v.part
                else:
                    parts.append("*")
                    part = True
            r = "".join(parts)
            return V(c=r[:MAXS], t=tj(*vs), dec=dec, part=part) if len(r) <= MAXS else V(t=tj(*vs))
        if isinstance(n, (ast.List, ast.Tuple, ast.Set)):
            vs = [s.ev(fr, e.value if isinstance(e, ast.Starred) else e) for e in n.elts]
            c = NOC
            if len(vs) <= MAXSEQ and all(v.c is not NOC and not isinstance(v.c, tuple) and not v.part for v in vs):
                c = tuple(v.c for v in vs)
            t = tj(*vs)
            if n.elts and all(isinstance(e, ast.Constant) and isinstance(e.value, (str, bytes)) for e in n.elts):
                t = t | s.lit(fr, n, n.elts)
            return V(c=c, t=t, dec=next((v.dec for v in vs if v.dec), None))
        if isinstance(n, ast.Compare):
            # A string compared with is data whatever the comparison: the result is a bool.
            vs = [s.ev(fr, e) for e in [n.left] + n.comparators]
            s.matched(fr, tj(*vs))
            for e in [n.left] + n.comparators:
                if isinstance(e, ast.Constant) and isinstance(e.value, (str, bytes)):
                    s.lit(fr, n, [e], used_ok=True)
            t = frozenset(l for l in tj(*vs) if l[0] != "lit")
            return V(t=t) if t else UNK
        if isinstance(n, ast.Dict):
            vs = [s.ev(fr, k) for k in n.keys if k is not None] + [s.ev(fr, v) for v in n.values]
            t = tj(*vs)
            if any(v.q == "os.environ" for v in vs):
                t = t | s.env_all(fr, n)
            return V(t=t)
        if isinstance(n, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return s.comp(fr, n)
        if isinstance(n, ast.DictComp):
            return s.comp(fr, n)
        if isinstance(n, ast.IfExp):
            s.ev(fr, n.test)
            return s.merge(s.ev(fr, n.body), s.ev(fr, n.orelse))
        if isinstance(n, ast.BoolOp):
            vs = [s.ev(fr, e) for e in n.values]
            r = None
            for v in vs:
                r = s.merge(r, v)
            return r
        if isinstance(n, ast.Subscript):
            return s.subscript(fr, n)
        if isinstance(n, ast.Lambda):
            return V(fn=Func(n, fr.mod, closure=fr.local if fr.fn is not None else None))
        if isinstance(n, (ast.Await, ast.Starred)):
            return s.ev(fr, n.value)
        if isinstance(n, ast.NamedExpr):
            v = s.ev(fr, n.value)
            s.assign(fr, n.target, v)
            return v
        vs = [s.ev(fr, c) for c in ast.iter_child_nodes(n) if isinstance(c, ast.expr)]
        return V(t=tj(*vs)) if any(v.t for v in vs) else UNK

    def comp(s, fr, n):
        g = n.generators[0]
        it = s.ev(fr, g.iter)
        local = dict(fr.local) if fr.local is not None else {}
        cf = Frame(fr.mod, fr.fn, local, fr.depth, fr.line)
        cf.psinks, cf.pesc, cf.pmatch = fr.psinks, fr.pesc, fr.pmatch
        elt = n.elt if not isinstance(n, ast.DictComp) else n.value
        seq = it.c
        if isinstance(seq, (str, bytes)) and not it.part:
            seq = tuple(seq)
        if len(n.generators) == 1 and isinstance(seq, tuple) and len(seq) <= MAXSEQ and isinstance(g.target, ast.Name):
            out, dec = [], it.dec
            for x in seq:
                local[g.target.id] = V(c=x, dec=it.dec, t=it.t)
                if any(not s.truthy(s.ev(cf, c)) for c in g.ifs):
                    continue
                v = s.ev(cf, elt)
                if v.c is NOC or isinstance(v.c, tuple) or v.part:
                    out = None
                    break
                dec = dec or v.dec
                out.append(v.c)
            if out is not None:
                return V(c=tuple(out), dec=dec, t=it.t)
        for gen in n.generators:
            s.assign(cf, gen.target, s.element(s.ev(cf, gen.iter), fr, n))
            for c in gen.ifs:
                s.ev(cf, c)
        v = s.ev(cf, elt)
        return V(t=it.t | v.t, dec=it.dec or v.dec)

    def truthy(s, v):
        return v.c is NOC or bool(v.c)

    def subscript(s, fr, n):
        base = s.ev(fr, n.value)
        if base.q == "os.environ":
            return s.env_read(fr, n, s.ev(fr, n.slice))
        sl = n.slice
        if type(sl).__name__ == "Index":  # Python 3.8
            sl = sl.value
        if isinstance(sl, ast.Slice):
            lo = s.ev(fr, sl.lower) if sl.lower else V(c=None)
            hi = s.ev(fr, sl.upper) if sl.upper else V(c=None)
            st = s.ev(fr, sl.step) if sl.step else V(c=None)
            if isinstance(base.c, (str, bytes, tuple)) and not base.part and all(
                    x.c is None or (isinstance(x.c, int) and not isinstance(x.c, bool)) for x in (lo, hi, st)):
                if st.c != 0:
                    return V(c=base.c[slice(lo.c, hi.c, st.c)], t=base.t, dec=base.dec or ("reversal" if st.c == -1 else None))
            return V(t=base.t, dec=base.dec)
        idx = s.ev(fr, sl)
        if isinstance(base.c, (str, bytes, tuple)) and not base.part and isinstance(idx.c, int) and -len(base.c) <= idx.c < len(base.c):
            return V(c=base.c[idx.c], t=base.t, dec=base.dec)
        if base.q in ("builtins", "globals()", "vars()") or (base.q or "").endswith("__dict__"):
            if isstr(idx):
                return V(q=text(idx.c), hid=not isinstance(sl, ast.Constant))
        return V(t=base.t | idx.t, dec=base.dec, part=True, c=NOC)

    def attr(s, fr, n, base, name):
        if base.mod is not None:
            m = base.mod
            if name in m.g:
                return m.g[name]
            sub = s.find_mod((m.name + "." if m.name else "") + name)
            if sub is not None:
                s.run_mod(sub)
                return V(mod=sub)
            return UNK
        if base.inst is not None or base.cls is not None:
            c = base.inst or base.cls
            v = c.attrs.get(name)
            if v is None:
                return V(t=base.t)
            if v.fn is not None:
                return V(fn=v.fn, recv=base, t=EMPTY)
            t = frozenset(l for l in v.t if l[0] != "param") | base.t
            return V(c=v.c, q=v.q, t=t, dec=v.dec, part=v.part, inst=v.inst, cls=v.cls)
        if base.q is not None:
            return V(q=base.q + "." + name, t=base.t, hid=base.hid, recv=base)
        return V(t=base.t, recv=base, dec=base.dec, q=("$." + name) if base.c is not NOC else None)

    # ---- operators ----------------------------------------------------------
    def binop(s, fr, n, a, op, b):
        t = a.t | b.t
        dec = a.dec or b.dec
        part = a.part or b.part
        ca, cb = a.c, b.c
        try:
            if (a.q or "").startswith("pathlib.Path") and isinstance(op, ast.Div):
                return V(q="pathlib.Path()", c=posixpath.join(pstr(a), pstr(b)), t=t, part=part or not isstr(b), dec=dec)
            if isinstance(op, ast.Add):
                if isinstance(ca, str) and isinstance(cb, str) or isinstance(ca, bytes) and isinstance(cb, bytes):
                    if len(ca) + len(cb) <= MAXS:
                        return V(c=ca + cb, t=t, dec=dec, part=part)
                elif isinstance(ca, str) or isinstance(cb, str):
                    return V(c=pstr(a) + pstr(b), t=t, dec=dec, part=True)
            elif isinstance(op, ast.Mod) and isinstance(ca, (str, bytes)) and not a.part:
                args = cb if isinstance(cb, tuple) else (cb,)
                if cb is not NOC and all(x is not NOC for x in args):
                    r = ca % args
                    if len(r) <= MAXS:
                        return V(c=r, t=t, dec=dec, part=part)
                return V(c=fmt_star(text(ca)), t=t, dec=dec, part=True)
            elif isinstance(op, ast.Mult) and isinstance(ca, (str, bytes, tuple)) and isinstance(cb, int):
                if len(ca) * max(cb, 0) <= MAXS:
                    return V(c=ca * cb, t=t, dec=dec, part=part)
            elif isinstance(ca, int) and isinstance(cb, int) and not isinstance(ca, bool):
                if isinstance(op, ast.Pow):
                    if abs(cb) <= 64 and abs(ca) < 1 << 64:
                        return V(c=ca ** cb, t=t)
                elif isinstance(op, (ast.LShift,)):
                    if 0 <= cb <= 64:
                        return V(c=ca << cb, t=t)
                else:
                    f = {ast.Sub: lambda x, y: x - y, ast.BitXor: lambda x, y: x ^ y, ast.BitAnd: lambda x, y: x & y,
                         ast.BitOr: lambda x, y: x | y, ast.RShift: lambda x, y: x >> y, ast.Mod: lambda x, y: x % y,
                         ast.FloorDiv: lambda x, y: x // y, ast.Mult: lambda x, y: x * y, ast.Add: lambda x, y: x + y}.get(type(op))
                    if f is not None and abs(ca) < 1 << 64 and abs(cb) < 1 << 64:
                        return V(c=f(ca, cb), t=t)
        except Exception:
            pass
        return V(t=t, dec=dec, part=True, c=(pstr(a) + pstr(b)) if isinstance(op, ast.Add) and (isinstance(ca, str) or isinstance(cb, str)) else NOC)

    # ---- calls --------------------------------------------------------------
    def call(s, fr, n):
        f = s.ev(fr, n.func)
        args = [s.ev(fr, a.value if isinstance(a, ast.Starred) else a) for a in n.args]
        kw = {}
        for k in n.keywords:
            v = s.ev(fr, k.value)
            if k.arg is None:
                kw.setdefault("**", []).append(v)
            else:
                kw[k.arg] = v
        q = f.q
        if q not in ("os.environ.get", "os.environ.setdefault", "os.environ.pop"):
            envt = None
            for i, v in enumerate(args):
                if v.q == "os.environ":
                    envt = envt or s.env_all(fr, n)
                    args[i] = V(t=envt)
            for k, v in list(kw.items()):
                if k != "**" and v.q == "os.environ":
                    envt = envt or s.env_all(fr, n)
                    kw[k] = V(t=envt)
            if any(v.q == "os.environ" for v in kw.get("**", [])):
                kw["**"] = [V(t=s.env_all(fr, n))]
        if q in RE_FUNCS and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, (str, bytes)):
            # A pattern literal: compiled, it travels with the object (.pattern gives it back).
            args[0] = cp(args[0], t=args[0].t | s.lit(fr, n, [n.args[0]], used_ok=q != "re.compile"))
        allv = args + [v for k, v in kw.items() if k != "**"] + kw.get("**", [])
        if f.fn is None and f.cls is None:
            if s.matching_call(n, q):
                s.matched(fr, tj(f.recv, *allv))
            else:
                s.escape(fr, tj(f.recv, *allv))
        # Our own code: apply the function's summary.
        if f.fn is not None:
            return s.apply(fr, n, f.fn, ([f.recv] if f.recv is not None and f.fn.cls is not None else []) + args, kw)
        if f.cls is not None:
            inst = V(inst=f.cls, t=tj(*allv))
            init = f.cls.attrs.get("__init__")
            if init is not None and init.fn is not None:
                s.apply(fr, n, init.fn, [inst] + args, kw)
            return inst
        r = s.fold(fr, n, f, q, args, kw)
        if r is not None:
            res = r
        else:
            res = V(t=tj(f, *allv), dec=next((v.dec for v in allv if v.dec), None) if q and q.startswith("$.") else None)
            if q is not None and not q.startswith("$."):
                res = cp(res, q=q + "()")
        s.sinks(fr, n, f, q, args, kw, allv)
        # A method that takes tainted data into a plain variable (buf.append(secret)) taints it.
        if isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) and (f.q is None or f.q.startswith("$.")):
            t = tj(*allv)
            if t:
                s.taint_name(fr, n.func.value.id, t)
        if q is not None and is_net(q):
            res = cp(res, t=res.t | frozenset([("fetched", "code fetched from the network", fr.mod.path, s.line_of(fr, n), ())]))
        return res

    def apply(s, fr, n, fn, args, kw):
        busy = fn.busy
        ret, psinks = s.summary(fn)
        actual = {}
        for i, p in enumerate(fn.params):
            if i < len(args):
                actual[i] = args[i]
            elif p in kw:
                actual[i] = kw[p]
        # Deny-lists: a literal passed where the function lets it reach more than
        # matching (or where that is not known yet: recursion, *args, **kw) is used.
        extra = [v for v in args[len(fn.params):]] + [v for k, v in kw.items() if k not in fn.params]
        for i, a in list(actual.items()) + [(-1, v) for v in extra]:
            if busy or i < 0 or i in fn.pesc:
                s.escape(fr, a.t)
            elif i in fn.pmatch:
                s.matched(fr, a.t)
        call_at = s.where(fr, n)
        for (i, sink) in psinks:
            a = actual.get(i)
            if a is None or not a.t:
                continue
            kind, sfile, sline, smatch, extra = sink
            for lab in a.t:
                if lab[0] == "param":
                    fr.psinks.append((lab[1], (kind, sfile, sline, smatch, extra + ("passed to %s() (%s)" % (fn.name, call_at),))))
                    continue
                s.report_flow(fr.mod, lab, kind, sfile, sline, smatch, extra + ("passed to %s() (%s)" % (fn.name, call_at),))
        s.specialise(fn, actual)
        if ret is None:
            return UNK
        t = set()
        for lab in ret.t:
            if lab[0] == "param":
                a = actual.get(lab[1])
                if a is not None:
                    t |= a.t
            elif lab[0] == "lit":
                t.add(lab)
            else:
                t.add(lab[:4] + ((lab[4] + ("returned by %s() (%s)" % (fn.name, call_at),))[-6:],))
        return V(c=ret.c, q=ret.q, t=frozenset(t), dec=ret.dec, hid=ret.hid, fn=ret.fn, mod=ret.mod, cls=ret.cls,
                 inst=ret.inst, part=ret.part)

    def specialise(s, fn, actual):
        """Walk fn again with the caller's path constants bound (tidy(os.environ["HOME"])):
        a summary knows the parameters only as unknowns, so a deletion of a computed home
        path would go unseen. Once per function and constants, three calls deep at most."""
        consts = tuple(sorted((i, v.c) for i, v in actual.items()
                              if isinstance(v.c, str) and (v.c.startswith("~") or v.c.startswith("/"))))
        if not consts or s.spec_depth >= 3 or isinstance(fn.node, ast.Lambda):
            return
        key = (id(fn), consts)
        if key in s.specialised:
            return
        s.specialised.add(key)
        local = dict(fn.closure) if fn.closure else {}
        for i, p in enumerate(fn.params):
            local[p] = actual.get(i, UNK)
        if fn.cls is not None and fn.params and 0 not in actual:
            local[fn.params[0]] = V(inst=fn.cls)
        s.spec_depth += 1
        try:
            s.block(Frame(fn.mod, fn, local), fn.node.body)
        finally:
            s.spec_depth -= 1

    def summary(s, fn):
        if fn.summary is not None:
            return fn.summary
        if fn.busy:
            return (None, [])
        fn.busy = True
        local = dict(fn.closure) if fn.closure else {}
        for i, p in enumerate(fn.params):
            local[p] = V(t=frozenset([("param", i)]))
        if fn.cls is not None and fn.params:
            local[fn.params[0]] = V(inst=fn.cls)
        a = fn.node.args
        fr = Frame(fn.mod, fn, local)
        for d in list(a.defaults) + [d for d in a.kw_defaults if d is not None]:
            s.ev(fr, d)
        if isinstance(fn.node, ast.Lambda):
            fr.ret = s.ev(fr, fn.node.body)
        else:
            s.block(fr, fn.node.body)
        fn.summary = (fr.ret, fr.psinks)
        fn.pesc, fn.pmatch = frozenset(fr.pesc), frozenset(fr.pmatch)
        fn.busy = False
        return fn.summary

    def fold(s, fr, n, f, q, args, kw):
        a0 = args[0] if args else None
        if q is None:
            return None
        if q.startswith("$."):
            return s.method(fr, n, f.recv, q[2:], args, kw)
        if q == "chr" and a0 is not None and isinstance(a0.c, int):
            try:
                return V(c=chr(a0.c), dec="chr", t=a0.t)
            except (ValueError, OverflowError):
                return None
        if q == "ord" and a0 is not None and isinstance(a0.c, str) and len(a0.c) == 1:
            return V(c=ord(a0.c), t=a0.t)
        if q in ("str", "bytes", "bytearray") and a0 is not None:
            if q == "str" and a0.c is not NOC and not isinstance(a0.c, tuple):
                if isinstance(a0.c, bytes):
                    return V(t=a0.t, dec=a0.dec)
                return V(c=str(a0.c)[:MAXS], t=a0.t, dec=a0.dec, part=a0.part, q="pathlib.Path()" if (a0.q or "").startswith("pathlib") else None) if not (a0.q or "").startswith("pathlib") else V(c=a0.c, t=a0.t, part=a0.part, dec=a0.dec)
            if q != "str" and isinstance(a0.c, tuple) and all(isinstance(x, int) and 0 <= x < 256 for x in a0.c):
                return V(c=bytes(a0.c), dec=a0.dec or "byte list", t=a0.t)
            if q != "str" and isinstance(a0.c, str) and len(args) > 1 and isstr(args[1]):
                try:
                    return V(c=a0.c.encode(text(args[1].c)), t=a0.t, dec=a0.dec)
                except Exception:
                    return None
            return V(c=a0.c if q == "str" else NOC, t=a0.t, dec=a0.dec, part=a0.part) if q == "str" else V(t=a0.t, dec=a0.dec)
        if q in ("map",) and len(args) == 2 and args[0].q in ("chr", "ord", "str") and isinstance(args[1].c, (tuple, str)):
            fnq = args[0].q
            try:
                out = tuple({"chr": chr, "ord": ord, "str": str}[fnq](x) for x in args[1].c)
                return V(c=out, dec="chr" if fnq == "chr" else args[1].dec, t=args[1].t)
            except Exception:
                return None
        if q in ("reversed", "list", "tuple", "sorted") and a0 is not None:
            if isinstance(a0.c, (str, bytes, tuple)) and not a0.part:
                c = tuple(a0.c)
                if q == "reversed":
                    c = c[::-1]
                elif q == "sorted":
                    try:
                        c = tuple(sorted(c))
                    except TypeError:
                        return V(t=a0.t)
                return V(c=c, t=a0.t, dec=a0.dec or ("reversal" if q == "reversed" else None))
            return V(t=a0.t, dec=a0.dec)
        if q in ("int",) and a0 is not None and isstr(a0):
            try:
                return V(c=int(a0.c, args[1].c if len(args) > 1 and isinstance(args[1].c, int) else 10), t=a0.t)
            except Exception:
                return None
        if q == "__import__" or q in ("importlib.import_module", "importlib.__import__"):
            if a0 is not None and isstr(a0):
                name = text(a0.c)
                if q == "importlib.import_module" and len(args) > 1 and isstr(args[1]) and name.startswith("."):
                    return UNK
                hid = not (n.args and isinstance(n.args[0], ast.Constant))
                own = s.find_mod(name)
                if own is not None:
                    s.run_mod(own)
                    return V(mod=own)
                return V(q=name if q != "__import__" else name.split(".")[0] if not kw.get("fromlist") else name, hid=hid)
            return V(q="?import", hid=True)
        if q == "getattr" and len(args) >= 2:
            obj, nm = args[0], args[1]
            if isstr(nm):
                hid = obj.hid or not (isinstance(n.args[1], ast.Constant))
                v = s.attr(fr, n, obj, text(nm.c))
                return cp(v, hid=v.hid or hid) if v.q is not None else v
            return V(q=(obj.q + ".?") if obj.q else None, hid=True, t=obj.t)
        if q in ("globals", "vars", "locals") and not args:
            return V(q="globals()")
        if q in ("vars",) and a0 is not None and a0.q:
            return V(q=a0.q + ".__dict__")
        if q in DECODERS or q in ("codecs.decode", "codecs.encode"):
            return s.decode(fr, n, q, args, kw)
        if q in ("os.path.expanduser", "os.path.expandvars", "os.path.abspath", "os.path.normpath",
                 "os.path.realpath", "posixpath.expanduser") and a0 is not None:
            c = a0.c
            if isinstance(c, str) and q == "os.path.expandvars":
                c = re.sub(r"\$\{?HOME\}?", "~", c)
            return V(c=c, t=a0.t, part=a0.part, dec=a0.dec)
        if q in ("os.path.join", "posixpath.join") and args:
            parts = [pstr(a) for a in args]
            return V(c=posixpath.join(*parts), t=tj(*args), part=any(not isstr(a) for a in args), dec=a0.dec)
        if q in ("pathlib.Path", "pathlib.PosixPath", "pathlib.PurePath"):
            p = posixpath.join(*[pstr(a) for a in args]) if args else "."
            return V(q="pathlib.Path()", c=p, t=tj(*args), part=any(not isstr(a) for a in args))
        if q in ("pathlib.Path.home", "pathlib.PosixPath.home", "os.path.expanduser") or q == "pathlib.Path.cwd":
            return V(q="pathlib.Path()", c="~" if q.endswith("home") else ".")
        if q in ("os.getenv", "os.environ.get", "os.environ.setdefault", "os.environ.pop", "os.getenvb"):
            return s.env_read(fr, n, a0 if a0 is not None else UNK)
        if q in ("os.environ.copy", "os.environ.items", "os.environ.values", "os.environ.keys", "dict") and (q != "dict" or (a0 is not None and a0.q == "os.environ")):
            return V(t=s.env_all(fr, n))
        if q in ("os.path.dirname", "os.path.basename") and a0 is not None:
            if isstr(a0):
                return V(c=(posixpath.dirname if q.endswith("dirname") else posixpath.basename)(text(a0.c)), t=a0.t)
            return V(t=a0.t, part=True, c="*")
        if q == "sys.executable":
            return None
        if q.startswith("pathlib.Path()."):
            return s.path_method(fr, n, f.recv, q[len("pathlib.Path()."):], args, kw)
        return None

    def env_read(s, fr, n, k):
        if not isstr(k):
            return V(part=True, c="*")
        name = text(k.c)
        if name in ("HOME", "USERPROFILE"):
            return V(c="~")
        if name == "HERMES_HOME":
            return V(c="~/.hermes")
        if name.startswith("XDG_CONFIG_HOME"):
            return V(c="~/.config")
        if secret_env(name) and name.upper() not in s.declared:
            return V(t=frozenset([("secret", "reads the environment secret $%s" % name, fr.mod.path, s.line_of(fr, n), ())]))
        return UNK

    def env_all(s, fr, n):
        return frozenset([("secret", "reads the whole environment", fr.mod.path, s.line_of(fr, n), ())])

    def method(s, fr, n, recv, name, args, kw):
        """Methods of folded strings, bytes and sequences."""
        if recv is None:
            return None
        c = recv.c
        a0 = args[0] if args else None
        t = tj(recv, *args)
        dec = recv.dec or next((a.dec for a in args if a.dec), None)
        try:
            if name == "join" and isinstance(c, (str, bytes)) and a0 is not None:
                if isinstance(a0.c, tuple) and not recv.part and all(isinstance(x, type(c)) for x in a0.c):
                    r = c.join(a0.c)
                    if len(r) <= MAXS:
                        if dec:
                            s.emit_string(fr, n, r, dec, "decoded")
                        return V(c=r, t=t, dec=dec)
                return V(t=t, dec=dec, part=True, c="*")
            if name == "format" and isinstance(c, str):
                vals = [text(a.c) if a.c is not NOC and not isinstance(a.c, tuple) else "*" for a in args]
                kws = {k: (text(v.c) if v.c is not NOC and not isinstance(v.c, tuple) else "*") for k, v in kw.items() if k != "**"}
                r = c.format(*vals, **kws)
                return V(c=r[:MAXS], t=t, dec=dec, part=any(a.c is NOC for a in args) or recv.part)
            if name == "decode" and isinstance(c, bytes):
                enc = text(a0.c).lower() if a0 is not None and isstr(a0) else text(kw["encoding"].c).lower() if "encoding" in kw and isstr(kw["encoding"]) else "utf-8"
                if enc in ("unicode_escape", "raw_unicode_escape"):
                    return s.decoded(fr, n, c.decode(enc), "unicode_escape", recv)
                return V(c=c.decode(enc if enc in CODECS else "latin-1", "replace"), t=t, dec=dec)
            if name == "encode" and isinstance(c, str):
                return V(c=c.encode("utf-8", "surrogatepass"), t=t, dec=dec)
            if name in ("replace", "lower", "upper", "strip", "lstrip", "rstrip", "swapcase", "title", "capitalize", "zfill") and isinstance(c, (str, bytes)) and not recv.part:
                fa = [a.c for a in args]
                if all(x is not NOC for x in fa):
                    r = getattr(c, name)(*fa)
                    if len(r) <= MAXS:
                        return V(c=r, t=t, dec=dec)
            if name == "split" and isinstance(c, (str, bytes)) and not recv.part:
                fa = [a.c for a in args]
                if all(x is not NOC for x in fa):
                    r = tuple(c.split(*fa))
                    if len(r) <= MAXSEQ:
                        return V(c=r, t=t, dec=dec)
            if name == "translate" and isinstance(c, str) and a0 is not None and a0.dec == "maketrans":
                return V(t=t, dec="character map")
            if name == "fromhex":
                return s.decode(fr, n, "bytes.fromhex", args, kw)
            if name in ("read", "readlines", "read_text", "read_bytes", "readline", "getvalue", "json", "text", "content"):
                return V(t=t, dec=dec)
        except Exception:
            return V(t=t, dec=dec)
        return V(t=t, dec=dec)

    def decoded(s, fr, n, val, how, src):
        if isinstance(val, (str, bytes)) and len(val) > MAXS:
            val = val[:MAXS]
        chain = how if not src.dec or src.dec in ("chr",) else "%s of %s" % (how, src.dec)
        s.emit_string(fr, n, val, chain, "decoded")
        return V(c=val, dec=chain, t=src.t)

    def decode(s, fr, n, q, args, kw):
        a0 = args[0] if args else None
        if a0 is None:
            return V(dec="decoded")
        how = DECODERS.get(q)
        if q in ("codecs.decode", "codecs.encode"):
            enc = args[1] if len(args) > 1 else kw.get("encoding")
            ename = text(enc.c).lower().replace("-", "_") if enc is not None and isstr(enc) else None
            ename = {"utf_8": "utf-8", "latin_1": "latin-1"}.get(ename, ename)
            if ename not in CODECS:
                return V(t=a0.t, dec="decoded")
            how = CODECS[ename]
            if how is None:
                return V(c=a0.c, t=a0.t, dec=a0.dec)
        if a0.c is NOC or a0.part or not isinstance(a0.c, (str, bytes)):
            return V(t=a0.t, dec=how)
        data = a0.c
        try:
            base64, binascii, zlib, codecs = _decoders()
            if how == "zlib" or how == "gzip":
                b = data if isinstance(data, bytes) else data.encode("latin-1")
                wbits = args[1].c if len(args) > 1 and isinstance(args[1].c, int) else (31 if how == "gzip" else 15)
                d = zlib.decompressobj(wbits)
                out = d.decompress(b, MAXZ)
                if d.unconsumed_tail or len(out) >= MAXZ:
                    s.find(fr, n, "py_decode_bomb", "high", "obfuscation",
                           "compressed data expands past %d bytes (ratio over %d:1); it was not decoded further (possible decoding bomb)" % (MAXZ, MAXZ // max(len(b), 1)))
                    return V(t=a0.t, dec=how)
                return s.decoded(fr, n, out, how, a0)
            if how in ("marshal", "pickle", "bz2", "lzma"):
                return V(t=a0.t, dec=how)
            if how == "rot13":
                return s.decoded(fr, n, codecs.decode(text(data), "rot13"), how, a0)
            if q in ("codecs.decode", "codecs.encode"):
                b = data if isinstance(data, bytes) else data.encode("latin-1")
                return s.decoded(fr, n, codecs.decode(b, {"hex": "hex", "base64": "base64", "unicode_escape": "unicode_escape"}[how]), how, a0)
            fnc = {"base64": base64.b64decode, "base32": base64.b32decode, "base16": base64.b16decode,
                   "ascii85": base64.a85decode, "base85": base64.b85decode}.get(how)
            if q == "base64.urlsafe_b64decode":
                fnc = base64.urlsafe_b64decode
            if how == "hex":
                out = bytes.fromhex(text(data)) if isinstance(data, str) else binascii.unhexlify(data)
            elif how == "base16":
                out = base64.b16decode(data, casefold=True)
            else:
                out = fnc(data)
            return s.decoded(fr, n, out, how, a0)
        except Exception:
            return V(t=a0.t, dec=how)

    def path_method(s, fr, n, recv, name, args, kw):
        p = recv.c if recv is not None else NOC
        if name in ("expanduser", "resolve", "absolute", "with_suffix"):
            return V(q="pathlib.Path()", c=p, t=recv.t, part=recv.part)
        if name == "joinpath":
            return V(q="pathlib.Path()", c=posixpath.join(pstr(recv), *[pstr(a) for a in args]), t=tj(recv, *args),
                     part=recv.part or any(not isstr(a) for a in args))
        if name in ("parent",):
            return V(q="pathlib.Path()", c=posixpath.dirname(pstr(recv)), t=recv.t)
        return None

    # ---- sinks --------------------------------------------------------------
    def sinks(s, fr, n, f, q, args, kw, allv):
        qn = q or ""
        if qn.startswith("$."):
            qn = ""
        a0 = args[0] if args else (kw.get("args") or kw.get("cmd") or kw.get("source"))
        line = s.line_of(fr, n)
        smatch = s.match(fr.mod, line)
        if f.hid and (inq(qn, CODE_EXEC) or inq(qn, CMD_EXEC) or is_net(qn) or inq(qn, DELETE) or qn in ("open", "builtins.open")):
            s.find(fr, n, "py_hidden_call", "critical", "obfuscation",
                   "calls %s through a name assembled at run time (getattr/__import__/importlib with computed names)" % qn)
        if inq(qn, CODE_EXEC) and a0 is not None:
            s.code_exec(fr, n, qn, a0)
        elif inq(qn, CMD_EXEC) and a0 is not None:
            s.cmd_exec(fr, n, qn, a0, kw)
        elif qn in ("pip.main", "pip._internal.main", "pip._internal.cli.main.main") and a0 is not None:
            s.pip_check(fr, n, " ".join(text(x) if isinstance(x, (str, bytes)) else "*" for x in a0.c) if isinstance(a0.c, tuple) else pstr(a0))
        # Network: any source taint in what is sent.
        if is_net(qn):
            kind = net_kind(qn)
            for i, v in enumerate(allv):
                for lab in v.t:
                    if lab[0] == "param":
                        fr.psinks.append((lab[1], (kind, fr.mod.path, line, smatch, ())))
                    elif lab[0] == "secret":
                        s.report_flow(fr.mod, lab, kind, fr.mod.path, line, smatch, ())
            if f.recv is not None:
                for lab in f.recv.t:
                    if lab[0] == "param":
                        fr.psinks.append((lab[1], (kind, fr.mod.path, line, smatch, ())))
                    elif lab[0] == "secret":
                        s.report_flow(fr.mod, lab, kind, fr.mod.path, line, smatch, ())
        # Files: reads of secret stores are sources; writes and deletes of special places are sinks.
        target = None
        mode = None
        if qn in OPENERS:
            target = args[0] if args else kw.get("file")
            if qn == "pathlib.Path().open":
                target = f.recv
                m = args[0] if args else kw.get("mode")
            else:
                m = args[1] if len(args) > 1 else kw.get("mode") or kw.get("flags")
            if qn == "os.open":
                mode = "w" if m is not None and (not isinstance(m.c, int) or m.c & 3) else "r"
            else:
                mode = text(m.c) if m is not None and isstr(m) else ("r" if m is None else "w")
        elif qn.startswith("pathlib.Path()."):
            meth = qn[len("pathlib.Path()."):]
            target = f.recv
            if meth in ("write_text", "write_bytes", "touch", "symlink_to", "mkdir", "hardlink_to"):
                mode = "w"
            elif meth in ("read_text", "read_bytes", "iterdir", "glob", "rglob"):
                mode = "r"
            elif meth in ("unlink", "rmdir"):
                mode = "d"
        elif qn in ("shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.move", "os.rename", "os.replace",
                    "os.symlink", "os.link", "shutil.copytree"):
            if len(args) > 1:
                s.check_path(fr, n, args[1], "w")
            if args:
                s.check_path(fr, n, args[0], "r")
            return
        elif inq(qn, DELETE):
            target, mode = a0, "d"
        elif qn in ("os.listdir", "os.scandir", "os.walk", "glob.glob", "glob.iglob", "sqlite3.connect",
                    "tarfile.open", "zipfile.ZipFile", "shutil.make_archive", "os.stat"):
            target = a0 if qn != "shutil.make_archive" else (args[2] if len(args) > 2 else kw.get("root_dir"))
            mode = "r"
        elif inq(qn, ("keyring", "secretstorage", "browser_cookie3", "browsercookie", "win32crypt")):
            fr.extra_taint = ("secret", "reads the system keyring or browser store (%s)" % qn, fr.mod.path, line, ())
            return
        if target is not None and mode is not None:
            s.check_path(fr, n, target, mode)

    def check_path(s, fr, n, target, mode):
        p = norm(pstr(target))
        if mode.startswith("r") and "+" not in mode:
            label = classify(p, SECRET_PATHS)
            if label is None and (p in ("~", "~/", "~/*") or (p.startswith("~/") and target.part and p.count("/") <= 1)):
                label = "the home directory"
                p = "~"
            if label is not None:
                fr.extra_taint = ("secret", "reads %s" % p, fr.mod.path, s.line_of(fr, n), ())
            return
        if mode == "d":
            if p in ("~", "~/", "/", "~/.hermes", "~/.hermes/", "~/*", "/*") or re.match(r"^~/[^/]+/?$", p) or \
                    re.match(r"^~/\.hermes(/[^/]+)?/?$", p):
                s.find(fr, n, "py_destroy_home", "critical", "destructive",
                       "deletes %s (a home-level path%s)" % (p, ", computed at run time" if target.part else ""))
            return
        if re.search(HERMES_CFG, p):
            s.find(fr, n, "py_hermes_config_write", "critical", "persistence",
                   "writes hermes' own %s (a plugin granting itself settings, allow-lists or secrets)" % p)
            return
        label = classify(p, PERSIST_PATHS)
        if label is not None:
            s.find(fr, n, "py_persistence_write", "critical", "persistence", "writes %s (%s): runs again later without the user" % (label, p))

    def code_exec(s, fr, n, qn, a0):
        fetched = [lab for lab in a0.t if lab[0] == "fetched"]
        if fetched:
            lab = fetched[0]
            s.find(fr, n, "py_exec_remote", "critical", "supply_chain",
                   "runs code fetched from the network (%s:%d) with %s (%s)" % (lab[2], lab[3], qn, s.where(fr, n)))
        if a0.dec and a0.dec not in ("byte list",):
            s.find(fr, n, "py_exec_decoded", "critical", "obfuscation",
                   "runs code hidden by %s decoding with %s" % (a0.dec, qn))
        if isstr(a0):
            src = text(a0.c)
            s.emit_string(fr, n, src, a0.dec or "folded", "exec")
            if fr.depth < MAXEXEC:
                try:
                    tree = ast.parse(src)
                except Exception:
                    return
                sub = Frame(fr.mod, fr.fn, fr.local, fr.depth + 1, s.line_of(fr, n))
                sub.psinks, sub.pesc, sub.pmatch = fr.psinks, fr.pesc, fr.pmatch
                s.block(sub, tree.body)

    def cmd_exec(s, fr, n, qn, a0, kw):
        fetched = [lab for lab in a0.t if lab[0] == "fetched"]
        if fetched:
            lab = fetched[0]
            s.find(fr, n, "py_exec_remote", "critical", "supply_chain",
                   "runs a command fetched from the network (%s:%d) with %s" % (lab[2], lab[3], qn))
        if a0.dec and a0.dec not in ("byte list",):
            s.find(fr, n, "py_exec_decoded", "critical", "obfuscation", "runs a command hidden by %s decoding with %s" % (a0.dec, qn))
        if isinstance(a0.c, tuple):
            cmd = " ".join(text(x) if isinstance(x, (str, bytes)) else str(x) for x in a0.c)
        elif n.args and isinstance(n.args[0], (ast.List, ast.Tuple)):
            # [sys.executable, "-m", "pip", ...]: the known words, "*" for the others.
            cmd = " ".join(pstr(s.ev(fr, e)) for e in n.args[0].elts)
        elif a0.c is not NOC and isinstance(a0.c, (str, bytes)):
            cmd = text(a0.c)
        else:
            cmd = None
        if cmd is None:
            return
        folded = not (isinstance(n.args[0], ast.Constant) if n.args else False)
        if folded or isinstance(a0.c, tuple):
            s.emit_string(fr, n, cmd, a0.dec or "folded", "command")
        s.pip_check(fr, n, cmd)
        low = cmd.lower()
        if re.search(r"(^|[\s;|&(/])crontab(\s|$)", low) and not re.search(r"crontab\s+-l\s*$", low):
            s.find(fr, n, "py_persistence_exec", "critical", "persistence", "installs a crontab entry at run time: runs again later without the user")
        if re.search(r"systemctl\s+--user\s+(enable|link)", low) or re.search(r"\blaunchctl\s+load\b", low):
            s.find(fr, n, "py_persistence_exec", "critical", "persistence", "enables a service at run time: runs again later without the user")

    def pip_check(s, fr, n, cmd):
        low = cmd.lower()
        if not re.search(r"\bpip[0-9.]*(\s|\"|'|$)", low) or " install" not in low:
            return
        if re.search(r"--(extra-)?index-url|(^|\s)-i\s|--trusted-host|--find-links|(^|\s)-f\s|git\+|https?://", low):
            s.find(fr, n, "py_pip_extra_index", "critical", "supply_chain",
                   "installs Python packages at run time from an extra or foreign index (dependency confusion; code nobody reviewed)")
        else:
            s.find(fr, n, "py_pip_runtime_install", "high", "supply_chain",
                   "installs Python packages at run time (code that was not part of the scanned plugin)")

    def report_flow(s, mod, lab, kind, sfile, sline, smatch, extra):
        _, what, file, line, steps = lab
        chain = ["%s (%s:%d)" % (what, file, line)] + list(steps) + list(extra) + ["%s (%s:%d)" % (kind, sfile, sline)]
        key = ("py_source_to_network", sfile, sline)
        if key in s.seen_f:
            return
        s.seen_f.add(key)
        s.findings.append({"id": "py_source_to_network", "sev": "critical", "cat": "exfiltration", "file": sfile,
                           "line": sline, "match": smatch, "desc": " → ".join(chain), "chain": chain})


# Frame.extra_taint: a source read by the current call; call() folds it into the result.
Frame.extra_taint = None
_orig_call = Analyzer.call


def _call(s, fr, n):
    saved = fr.extra_taint
    fr.extra_taint = None
    r = _orig_call(s, fr, n)
    if fr.extra_taint is not None:
        r = V(c=r.c, q=r.q, t=r.t | frozenset([fr.extra_taint]), dec=r.dec, part=r.part, recv=r.recv)
    fr.extra_taint = saved
    return r


Analyzer.call = _call


def field(inp):
    """One input field ("<length>\\n<bytes>"), None at the end of input."""
    head = inp.readline()
    if not head:
        return None
    n = int(head)
    b = inp.read(n)
    if len(b) != n:
        raise EOFError("input cut short")
    return b.decode("utf-8", "replace")


_JSON_ESC = {c: "\\u%04x" % c for c in range(32)}
_JSON_ESC.update({ord('"'): '\\"', ord("\\"): "\\\\", ord("\n"): "\\n", ord("\t"): "\\t"})


def to_json(v):
    """JSON text of the output (dicts, lists, tuples, str, int, bool, None): what json.dumps
    gives, less the escaping of non-ASCII (written as UTF-8; Go reads either)."""
    if isinstance(v, str):
        return '"' + v.translate(_JSON_ESC) + '"'
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return int.__repr__(v)
    if isinstance(v, dict):
        return "{" + ",".join(to_json(str(k)) + ":" + to_json(x) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(to_json(x) for x in v) + "]"
    raise TypeError("cannot write %s as JSON" % type(v).__name__)


def utf8_json(s):
    """The JSON text as UTF-8. A lone surrogate (chr(0xd800) folded from a plugin) has no
    UTF-8 form: it is written as a \\u escape, as json.dumps does (only inside strings)."""
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\\u%04x" % ord(c) if 0xD800 <= ord(c) < 0xE000 else c for c in s).encode("utf-8")


def main():
    inp = sys.stdin.buffer
    declared = [field(inp) for _ in range(int(field(inp) or "0"))]
    an = Analyzer(declared)
    while True:
        path = field(inp)
        if path is None:
            break
        an.add(path, field(inp))
    try:
        an.run()
    except (RecursionError, MemoryError) as e:
        an.incomplete = True
        an.notes.append({"id": "py_analysis_incomplete", "file": "", "line": 0,
                         "desc": "analysis stopped (%s); the rest of the plugin was judged by the line rules" % e.__class__.__name__})
    out = {"findings": an.findings, "strings": an.strings, "notes": an.notes, "data": an.data_strings()}
    sys.stdout.buffer.write(utf8_json(to_json(out)))
    sys.stdout.flush()


main()
