"""What a transformation script may do: the sandbox policy in one place.

Every layer of the sandbox (static checks, the script's namespace, the audit
hook in the child process) reads its rules from here, and every refusal is
phrased here, so that a refusal reads the same whichever layer caught it::

    t.f90:12:3: error: the transformation script may not import 'os'
"""

from __future__ import annotations

#: Modules a script may import, with what each resolves to (a read-only proxy
#: built in :mod:`f2loopy.directives.namespace`).  ``loopy`` is f2loopy's own
#: compatible namespace: loopy itself is never imported.
ALLOWED_MODULES = (
    "loopy", "loopy.match", "f2loopy", "f2loopy.transform", "f2loopy.transform.match",
    "numpy", "numpy.linalg", "math", "cmath", "itertools", "functools", "operator",
    "collections", "re", "fnmatch",
)

#: Builtins a script gets.  Everything else (``open``, ``eval``, ``exec``,
#: ``compile``, ``getattr`` without checks, ``type``, ``object``, ``vars``, ...)
#: is absent or replaced by a guarded version.
SAFE_BUILTINS = (
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "complex",
    "dict", "divmod", "enumerate", "filter", "float", "format", "frozenset", "hash", "hex",
    "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next",
    "oct", "ord", "pow", "range", "repr", "reversed", "round", "set", "slice", "sorted",
    "str", "sum", "tuple", "zip", "NotImplemented", "Ellipsis",
    # exceptions a script may raise or catch
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "Exception",
    "ImportError",
    "IndexError", "KeyError", "LookupError", "NameError", "NotImplementedError",
    "OverflowError", "RecursionError", "RuntimeError", "StopIteration", "TypeError",
    "ValueError", "ZeroDivisionError",
)

#: Builtins that exist in Python but not in a script; using one is refused
#: with a message naming it (rather than a puzzling NameError).
REFUSED_BUILTINS = (
    "open", "eval", "exec", "compile", "input", "breakpoint", "globals", "locals", "vars",
    "dir", "help", "exit", "quit", "setattr", "delattr", "type", "object", "super",
    "memoryview", "classmethod", "staticmethod", "property", "id", "copyright", "credits",
    "license", "bytearray",
)

#: Attribute names that lead to frames, code objects or native memory, and
#: methods that write files.  (Names starting with ``_`` are refused anyway.)
REFUSED_ATTRIBUTES = frozenset({
    "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "gi_suspended",
    "cr_frame", "cr_code", "cr_await", "cr_origin", "cr_running",
    "ag_frame", "ag_code", "ag_await", "ag_running",
    "f_back", "f_builtins", "f_code", "f_globals", "f_locals", "f_trace", "f_lasti",
    "f_lineno", "f_trace_lines", "f_trace_opcodes", "tb_frame", "tb_next", "tb_lasti",
    "tb_lineno", "co_code", "co_consts", "co_names", "co_varnames", "co_filename",
    "func_globals", "func_code", "func_closure", "im_func", "im_self", "mro",
    "ctypes", "tofile", "dump", "dumps", "save", "savetxt", "fromfile", "memmap",
    "system", "popen", "spawn", "fork", "modules", "builtins", "getframe", "settrace",
    "setprofile",
})

#: String methods that interpret ``{0.attr}`` / ``{0[key]}`` in their argument:
#: allowed only on a string literal whose fields are plain names or positions.
FORMAT_METHODS = frozenset({"format", "format_map"})

PREFIX = "the transformation script may not"


def refuse_import(module: str) -> str:
    return f"{PREFIX} import '{module}'"


def import_note() -> str:
    return "a script may import: " + ", ".join(ALLOWED_MODULES)


def refuse_attribute(attr: str) -> str:
    if attr.startswith("_"):
        return (f"{PREFIX} access '{attr}' (names starting with an underscore are off "
                "limits in the sandbox)")
    if attr in FORMAT_METHODS:
        return (f"{PREFIX} call '.{attr}' here (only on a string literal whose fields are "
                "plain names or positions; use an f-string)")
    return (f"{PREFIX} access '{attr}' (frames, code objects, native memory and file access "
            "are off limits)")


def refuse_attribute_of(attr: str, obj) -> str:
    """An attribute that the allow-list of :mod:`~f2loopy.directives.attributes` lacks."""
    if attr.startswith("_") or attr in REFUSED_ATTRIBUTES or attr in FORMAT_METHODS:
        return refuse_attribute(attr)
    kind = obj.__name__ if isinstance(obj, type) else type(obj).__name__
    what = "class" if isinstance(obj, type) else "object"
    return (f"{PREFIX} access '{attr}' of a {kind[:60]} {what} (scripts may read the public "
            "attributes of kernels, isl and pymbolic objects, and what arithmetic needs of "
            "numpy arrays and Python values)")


def refuse_class_pattern_attribute(attr: str) -> str:
    return (f"{PREFIX} match attributes by keyword in a class pattern ('{attr}='); match "
            "the object and read the attribute in the case body")


def refuse_name(name: str) -> str:
    return f"{PREFIX} use the name '{name}' (names starting with '__' are off limits)"


def refuse_builtin(name: str) -> str:
    return f"{PREFIX} use '{name}' (not available in the sandbox)"


def refuse_event(event: str, detail: str = "") -> str:
    """The message for an operation the audit hook refused."""
    what = f" ({detail})" if detail else ""
    if event == "open":
        return f"{PREFIX} open files{what}"
    if event == "import":
        return refuse_import(detail) if detail else f"{PREFIX} import modules"
    if event in ("compile", "exec", "code.__new__", "function.__new__", "marshal.loads",
                 "marshal.load", "pickle.find_class", "cpython.run_command"):
        return f"{PREFIX} compile or run new code ({event})"
    if event.startswith("socket.") or event.startswith(("urllib.", "http.", "ftplib.",
                                                        "smtplib.", "webbrowser.")):
        return f"{PREFIX} use the network ({event}{': ' + detail if detail else ''})"
    if event in ("subprocess.Popen", "os.system", "os.fork", "os.forkpty", "os.exec",
                 "os.posix_spawn", "os.spawn", "os.startfile", "pty.spawn"):
        return f"{PREFIX} start processes ({event})"
    if event.startswith("ctypes.") or event in ("cffi.dlopen",):
        return f"{PREFIX} load native code ({event}{': ' + detail if detail else ''})"
    if event in ("os.remove", "os.unlink", "os.rename", "os.rmdir", "os.mkdir", "os.chmod",
                 "os.chown", "os.link", "os.symlink", "os.truncate", "os.utime",
                 "shutil.rmtree", "shutil.copyfile", "shutil.move", "os.chdir",
                 "os.listdir", "os.scandir", "glob.glob", "tempfile.mkstemp",
                 "tempfile.mkdtemp"):
        return f"{PREFIX} touch the file system ({event}{': ' + detail if detail else ''})"
    if event.startswith("sys.") or event.startswith("object.__") or event.startswith("gc."):
        return f"{PREFIX} inspect the interpreter ({event}{': ' + detail if detail else ''})"
    if event in ("os.kill", "os.killpg", "signal.pthread_kill"):
        return f"{PREFIX} send signals ({event})"
    if event.startswith("resource."):
        return f"{PREFIX} change its resource limits ({event})"
    return f"{PREFIX} do '{event}'{what}"
