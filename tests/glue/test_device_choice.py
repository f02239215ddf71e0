"""One device per MPI rank: the choice of the C runtime and of the Python glue.

PoCL exposes two CPU devices with POCL_DEVICES="basic pthread" (named basic-...
and pthread-...), so two ranks on two devices can be seen by name."""

import itertools
import re
import subprocess
import sys
import textwrap

import pytest
from fortran_util import CFLAGS, ROOT, RUNTIME, device_env, link_flags, run

from f2loopy.glue.devices import _choose_device, _describe, _local_rank

RANK_VARS = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK",
             "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")
TWO = [("Portable Computing Language", ["basic-cpu", "pthread-cpu"])]


def clean_env(**extra):
    """The test's environment without any launcher or device selection variable."""
    env = device_env()
    for var in (*RANK_VARS, "F2LOOPY_DEVICE", "PYOPENCL_CTX", "F2LOOPY_VERBOSE",
                "POCL_DEVICES"):
        env.pop(var, None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


# {{{ the selection rules, on device lists

@pytest.mark.parametrize("rank, device", [(None, 0), (0, 0), (1, 1), (2, 0), (5, 1)])
def test_rank_modulo_devices(rank, device):
    plat, dev, _ = _choose_device(TWO, rank, {})
    assert (plat, dev) == (0, device)


def test_one_device_is_shared():
    assert {_choose_device([("P", ["only"])], r, {})[1] for r in range(4)} == {0}


def test_first_platform_with_devices():
    platforms = [("empty", []), ("A", ["a0", "a1", "a2"])]
    assert _choose_device(platforms, 4, {})[:2] == (1, 1)


@pytest.mark.parametrize("env, rank, want", [
    ({"F2LOOPY_DEVICE": "1:0"}, 1, (1, 0)),                  # pinned: the rank is ignored
    ({"F2LOOPY_DEVICE": "b:pthread"}, 0, (1, 1)),            # by parts of the names
    ({"F2LOOPY_DEVICE": "1"}, 3, (1, 1)),                    # the platform only: rank mod 2
    ({"PYOPENCL_CTX": "1:0"}, 1, (1, 0)),
    ({"F2LOOPY_DEVICE": "0:0", "PYOPENCL_CTX": "1:1"}, 0, (0, 0)),
])
def test_environment_overrides(env, rank, want):
    platforms = [("A", ["a0"]), ("B", ["basic", "pthread"])]
    assert _choose_device(platforms, rank, env)[:2] == want


@pytest.mark.parametrize("platforms, env, message", [
    ([], {}, "no OpenCL platform found"),
    ([("A", [])], {}, "no OpenCL device found (platforms: [0] A: no devices)"),
    (TWO, {"F2LOOPY_DEVICE": "7"},
     ("F2LOOPY_DEVICE=7: no OpenCL platform '7' (platforms: [0] Portable Computing Language: "
      "[0] basic-cpu [1] pthread-cpu)")),
    (TWO, {"F2LOOPY_DEVICE": "0:gpu"},
     "platform Portable Computing Language has no device 'gpu'"),
    (TWO, {"PYOPENCL_CTX": "0:\x1b[31m"},
     "PYOPENCL_CTX=0:?[31m: platform Portable Computing Language has no device '?[31m'"),
])
def test_selection_errors(platforms, env, message):
    with pytest.raises(RuntimeError) as info:
        _choose_device(platforms, 0, env)
    assert message in str(info.value)


def test_description_says_how():
    plat, dev, how = _choose_device(TWO, 3, {})
    assert _describe(TWO, plat, dev, how, 3, "SLURM_LOCALID") == (
        "local rank 3 (from SLURM_LOCALID): device 1 of 2 of platform 'Portable Computing "
        "Language': pthread-cpu")
    plat, dev, how = _choose_device(TWO, None, {"F2LOOPY_DEVICE": "0:1"})
    assert _describe(TWO, plat, dev, how, None, None) == (
        "no local rank: device 1 of 2 of platform 'Portable Computing Language' (chosen by "
        "F2LOOPY_DEVICE=0:1): pthread-cpu")


def test_local_rank_from_the_launcher(monkeypatch):
    for var in RANK_VARS:
        monkeypatch.delenv(var, raising=False)
    assert _local_rank() == (None, None)
    monkeypatch.setenv("SLURM_LOCALID", "3")
    assert _local_rank() == (3, "SLURM_LOCALID")
    # mpirun inside a Slurm allocation: the launcher's own variable wins
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1")
    assert _local_rank() == (1, "OMPI_COMM_WORLD_LOCAL_RANK")
    monkeypatch.delenv("OMPI_COMM_WORLD_LOCAL_RANK")
    monkeypatch.setenv("MPI_LOCALRANKID", "-1")
    with pytest.raises(RuntimeError, match=r"MPI_LOCALRANKID='-1' is not a node-local rank"):
        _local_rank()



# }}}


# {{{ on PoCL: the C runtime and the generated Python glue


@pytest.fixture(scope="module")
def c_test(tmp_path_factory, gcc, opencl_headers, opencl_device):
    out = tmp_path_factory.mktemp("choice")
    exe = out / "test_runtime"
    run(["gcc", *CFLAGS, "-I", RUNTIME, RUNTIME / "f2loopy_runtime.c",
         RUNTIME / "tests" / "test_runtime.c", *link_flags(), "-o", exe])
    return exe


def c_choice(exe, *args, **env):
    proc = run([exe, "choice", *args], env=clean_env(**env), check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("choice: "), proc.stdout
    return proc.stdout.strip(), proc.stderr


@pytest.mark.opencl
def test_c_two_ranks_two_devices(c_test):
    rank0, _ = c_choice(c_test, OMPI_COMM_WORLD_LOCAL_RANK=0, POCL_DEVICES="basic pthread")
    rank1, _ = c_choice(c_test, OMPI_COMM_WORLD_LOCAL_RANK=1, POCL_DEVICES="basic pthread")
    assert rank0.startswith("choice: rank 0 device 0 of 2: basic-"), rank0
    assert rank1.startswith("choice: rank 1 device 1 of 2: pthread-"), rank1
    rank2, _ = c_choice(c_test, MPI_LOCALRANKID=2, POCL_DEVICES="basic pthread")
    assert rank2.startswith("choice: rank 2 device 0 of 2: basic-"), rank2


@pytest.mark.opencl
def test_c_two_ranks_one_device(c_test):
    rank0, _ = c_choice(c_test, SLURM_LOCALID=0, POCL_DEVICES="pthread")
    rank1, _ = c_choice(c_test, SLURM_LOCALID=1, POCL_DEVICES="pthread")
    assert rank0.startswith("choice: rank 0 device 0 of 1: pthread-"), rank0
    assert rank1.startswith("choice: rank 1 device 0 of 1: pthread-"), rank1


@pytest.mark.opencl
def test_c_rank_given_by_the_program(c_test):
    # f2l_init_rank wins over the environment
    out, _ = c_choice(c_test, "1", OMPI_COMM_WORLD_LOCAL_RANK=0, POCL_DEVICES="basic pthread")
    assert out.startswith("choice: rank 1 device 1 of 2: pthread-"), out


@pytest.mark.opencl
def test_c_override_and_verbose(c_test):
    out, err = c_choice(c_test, OMPI_COMM_WORLD_LOCAL_RANK=1, POCL_DEVICES="basic pthread",
                        F2LOOPY_DEVICE="0:basic", F2LOOPY_VERBOSE=1)
    assert out.startswith("choice: rank 1 device 0 of 2: basic-"), out
    lines = [line for line in err.splitlines() if line.startswith("f2loopy:")]
    assert len(lines) == 1, err
    assert lines[0].startswith(
        "f2loopy: local rank 1 (from OMPI_COMM_WORLD_LOCAL_RANK): device 0 of 2 of platform "
        "'Portable Computing Language"), lines
    assert "(chosen by F2LOOPY_DEVICE=0:basic): basic-" in lines[0]
    _, quiet = c_choice(c_test, F2LOOPY_VERBOSE=0)
    assert "f2loopy:" not in quiet


@pytest.mark.opencl
def test_c_bad_rank_variable(c_test):
    proc = run([c_test, "choice"], env=clean_env(OMPI_COMM_WORLD_LOCAL_RANK="1\x1b]x"),
               check=False)
    assert proc.stdout.strip() == ("error 1: OMPI_COMM_WORLD_LOCAL_RANK='1?]x' is not a "
                                   "node-local rank (a non-negative integer)")


PY_GLUE = textwrap.dedent("""
    subroutine twice(n, x)
      integer, intent(in) :: n
      real, intent(inout) :: x(n)
      integer :: i
      do i = 1, n
        x(i) = 2 * x(i)
      end do
    end subroutine
""")

PY_MAIN = textwrap.dedent("""
    import sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    import twice_cl
    x = np.arange(5, dtype=np.float32)
    twice_cl.twice(5, x)
    assert np.array_equal(x, 2 * np.arange(5)), x
    print("device:", twice_cl._default_queue().device.name)
""")


@pytest.fixture(scope="module")
def py_glue(tmp_path_factory):
    pytest.importorskip("pyopencl")
    from f2loopy.pipeline import translate_text, write_outputs
    out = tmp_path_factory.mktemp("pychoice")
    path = out / "twice.f90"
    path.write_text(PY_GLUE)
    write_outputs(translate_text(PY_GLUE, path).outputs)
    (out / "main.py").write_text(PY_MAIN)
    return out


def py_choice(out, **env):
    proc = subprocess.run([sys.executable, out / "main.py", out], env=clean_env(**env),
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.strip(), [line for line in proc.stderr.splitlines()
                                 if line.startswith("f2loopy:")]


@pytest.mark.opencl
def test_python_glue_two_ranks_two_devices(py_glue):
    out0, err0 = py_choice(py_glue, OMPI_COMM_WORLD_LOCAL_RANK=0, POCL_DEVICES="basic pthread",
                           F2LOOPY_VERBOSE=1)
    out1, _ = py_choice(py_glue, OMPI_COMM_WORLD_LOCAL_RANK=1, POCL_DEVICES="basic pthread")
    assert out0.startswith("device: basic-") and out1.startswith("device: pthread-"), (out0, out1)
    assert len(err0) == 1 and err0[0].startswith(
        "f2loopy: local rank 0 (from OMPI_COMM_WORLD_LOCAL_RANK): device 0 of 2 of platform "), err0
    out1, _ = py_choice(py_glue, OMPI_COMM_WORLD_LOCAL_RANK=1, POCL_DEVICES="pthread")
    assert out1.startswith("device: pthread-"), out1


@pytest.mark.opencl
def test_python_and_c_agree(py_glue, c_test):
    """A program mixing Fortran and Python ranks puts each on the same device."""
    env = {"SLURM_LOCALID": 3, "POCL_DEVICES": "basic pthread", "F2LOOPY_VERBOSE": 1}
    _, py_lines = py_choice(py_glue, **env)
    _, c_err = c_choice(c_test, **env)
    c_lines = [line for line in c_err.splitlines() if line.startswith("f2loopy:")]
    assert py_lines == c_lines and len(c_lines) == 1, (py_lines, c_lines)


# {{{ under a real launcher

needs_mpirun = pytest.mark.usefixtures("mpi")


def mpirun(np_, *cmd, **env):
    """mpirun -np NP CMD with Open MPI's options for root and few cores."""
    env = clean_env(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1,
                    OMPI_MCA_rmaps_base_oversubscribe=1, **env)
    return run(["mpirun", "-np", str(np_), *cmd], env=env, timeout=300)


@needs_mpirun
@pytest.mark.opencl
def test_mpirun_ranks_pick_devices(c_test, py_glue):
    # mpirun forwards the ranks' lines as they come, at times without the
    # newline between them: the reports are found anywhere in the output
    choice = r"choice: rank (\d+) device (\d+) of (\d+): (basic|pthread)-"
    proc = mpirun(2, c_test, "choice", POCL_DEVICES="basic pthread")
    lines = sorted(re.findall(choice, proc.stdout))
    assert lines == [("0", "0", "2", "basic"), ("1", "1", "2", "pthread")], proc.stdout
    proc = mpirun(2, c_test, "choice", POCL_DEVICES="pthread")
    lines = sorted(re.findall(choice, proc.stdout))
    assert lines == [("0", "0", "1", "pthread"), ("1", "0", "1", "pthread")], proc.stdout
    proc = mpirun(2, sys.executable, py_glue / "main.py", py_glue, POCL_DEVICES="basic pthread")
    devices = sorted(re.findall(r"device: (basic|pthread)-", proc.stdout))
    assert devices == ["basic", "pthread"], proc.stdout



COMM_MAIN = textwrap.dedent("""
    from mpi4py import MPI
    from f2loopy.glue.devices import local_rank, rank_queue
    comm = MPI.COMM_WORLD.Split(0, MPI.COMM_WORLD.Get_size() - MPI.COMM_WORLD.Get_rank())
    rank, source = local_rank(comm)
    print(f"comm|{MPI.COMM_WORLD.Get_rank()}|{rank}|{source}|{rank_queue(comm).device.name}")
""")


@needs_mpirun
@pytest.mark.opencl
def test_mpirun_rank_from_an_mpi4py_communicator(tmp_path):
    """rank_queue(comm): the rank in comm among the processes of the node, here
    the reverse of the world rank (comm is ordered so)."""
    probe = subprocess.run([sys.executable, "-c", "from mpi4py import MPI"], capture_output=True,
                           check=False, timeout=60)
    if probe.returncode != 0:
        pytest.skip("needs mpi4py (scripts/setup.sh installs it)")
    (tmp_path / "comm.py").write_text(COMM_MAIN)
    proc = mpirun(2, sys.executable, tmp_path / "comm.py", POCL_DEVICES="basic pthread")
    # (the ranks' lines may come without the newline between them)
    lines = sorted(re.findall(r"comm\|(\d+)\|(\d+)\|([^|]*)\|(basic|pthread)-", proc.stdout))
    assert lines == [("0", "1", "the communicator", "pthread"),
                     ("1", "0", "the communicator", "basic")], proc.stdout

# }}}

# }}}


# {{{ halos in Python: sections of pyopencl arrays

@pytest.mark.opencl
def test_python_halo_exchange_with_pyopencl_sections(tmp_path, cl_queue):
    """samples/mpi_heat's kernel from Python, the grid split into two blocks that
    stay on the device (pyopencl arrays) and swap halo columns through sections
    (u[:, k].get() / .set()): the result equals the one-block run bit for bit."""
    cla = pytest.importorskip("pyopencl.array")
    import numpy as np

    from util import translate_and_load
    source = (ROOT / "samples" / "mpi_heat" / "heat_block.f90").read_text()
    glue, _ = translate_and_load(source, tmp_path, filename="heat_block.f90")
    nx, ny, steps, r = 21, 13, 6, 0.2
    x = np.linspace(0, 1, nx + 2)[:, None]
    y = np.linspace(0, 1, ny + 2)[None, :]
    field = np.asfortranarray(np.exp(-40 * ((x - 0.3) ** 2 + (y - 0.6) ** 2)))

    def run(blocks):
        """Columns 1..ny split at the block bounds; returns the gathered field."""
        us, news = [], []
        for lo, hi in blocks:   # interior columns lo..hi, with one halo column each side
            part = np.asfortranarray(field[:, lo - 1:hi + 2])
            us.append(cla.to_device(cl_queue, part))
            news.append(cla.to_device(cl_queue, part))
        for _ in range(steps):
            for left, right in itertools.pairwise(us):
                right[:, 0].set(left[:, -2].get())
                left[:, -1].set(right[:, 1].get())
            for u, new, (lo, hi) in zip(us, news, blocks, strict=True):
                glue.heat_step(nx, hi - lo + 1, r, u, new, queue=cl_queue)
            us, news = news, us
        out = field.copy(order="F")
        for u, (lo, hi) in zip(us, blocks, strict=True):
            out[:, lo:hi + 1] = u.get()[:, 1:-1]
        return out

    whole = run([(1, ny)])
    split = run([(1, 7), (8, ny)])
    assert not np.array_equal(whole, field)
    assert np.array_equal(whole, split)

# }}}
