"""samples/mpi_heat driven from Python: the time loop of main.F90 with mpi4py,
the kernel through the Python glue of heat_block.f90, one device per rank.

    f2loopy translate samples/mpi_heat/heat_block.f90      # writes heat_block_cl.py
    mpirun -np 2 python3 samples/mpi_heat/heat_mpi4py.py [nx ny steps [file]]

Each rank keeps its block of the field (nx+2 x its columns + 2 halo columns) on its
device as pyopencl arrays for the whole run.  A step overlaps its halo exchange with
most of its work, as main.F90 does: it enqueues the two edge columns of the new field
(heat_cols), their copies into host buffers, and the interior columns, and only then
waits, for the copies (the queue runs in order: they wait for the edges, not for the
interior).  While the device computes the interior, the edges go out with MPI and
the two columns received are enqueued into the halo columns (without waiting: the
next step's copies come after them in the queue, and the step waits for those before
it reuses the buffers; the copies' events are kept until then, since pyopencl's event
of a copy from or to host memory waits for it when it is dropped).  The host buffers
are pinned (page-locked) memory.
Rank 0 gathers the field and writes it as main.F90 does, and prints the seconds per
step of the slowest rank as main.F90 does (timed from the third step on: the mean,
and the median of the single steps, the largest of the ranks' medians).
"""

import sys

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from mpi4py import MPI

import heat_block_cl


def pinned(queue, n):
    """A host array of n doubles in page-locked memory (a buffer the OpenCL
    implementation allocates on the host, mapped once for the whole run)."""
    buf = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR,
                    size=n * 8)
    host, _ = cl.enqueue_map_buffer(queue, buf, cl.map_flags.READ | cl.map_flags.WRITE, 0,
                                    (n,), np.float64)
    return host


def main(nx=96, ny=64, steps=200, out=""):
    comm = MPI.COMM_WORLD
    rank, nranks = comm.Get_rank(), comm.Get_size()
    if ny < nranks:
        raise SystemExit("heat_mpi4py: ny must be at least the number of ranks")
    # this rank's columns jlo .. jlo+nyl-1 of 1 .. ny (the first ranks take one more)
    counts = [ny // nranks + (r < ny % nranks) for r in range(nranks)]
    nyl, jlo = counts[rank], 1 + sum(counts[:rank])
    left = rank - 1 if rank > 0 else MPI.PROC_NULL
    right = rank + 1 if rank < nranks - 1 else MPI.PROC_NULL

    queue = heat_block_cl.rank_queue(comm)     # the device of this rank on its node
    print(f"rank {rank}: device {queue.device.name}", flush=True)
    x = np.arange(nx + 2)[:, None] / (nx + 1)
    y = np.arange(jlo - 1, jlo + nyl + 1)[None, :] / (ny + 1)
    block = np.asfortranarray(np.exp(-40 * ((x - 0.3) ** 2 + (y - 0.6) ** 2)))
    block[0, :] = 1
    u = cla.to_device(queue, block)
    unew = cla.to_device(queue, block)

    column = (nx + 2) * block.itemsize            # bytes of one column
    send_left, send_right, recv_left, recv_right = (pinned(queue, nx + 2) for _ in range(4))
    # the events of the copies between host buffers and the device, kept until
    # they are known to be complete: pyopencl's event of such a copy waits for
    # the copy when it is dropped, so a copy whose event is not kept blocks until
    # everything before it in the queue is done (the upload, until the interior)
    pending = []

    def swap_halos(a, send_done):
        """After *send_done* (the edge columns of a are in the send buffers), send
        them and enqueue the columns received into a's halo columns."""
        send_done.wait()
        pending.clear()     # all done: the uploads before came before the copies
        comm.Sendrecv(send_right, dest=right, sendtag=1, recvbuf=recv_left, source=left,
                      recvtag=1)
        comm.Sendrecv(send_left, dest=left, sendtag=2, recvbuf=recv_right, source=right,
                      recvtag=2)
        if left != MPI.PROC_NULL:
            pending.append(cl.enqueue_copy(queue, a.data, recv_left, dst_offset=0,
                                           is_blocking=False))
        if right != MPI.PROC_NULL:
            pending.append(cl.enqueue_copy(queue, a.data, recv_right,
                                           dst_offset=(nyl + 1) * column, is_blocking=False))

    def edges_to_host(a):
        """Enqueue the copies of a's edge columns into the send buffers; the
        event of the last (the queue runs in order: both are done with it)."""
        pending.append(cl.enqueue_copy(queue, send_left, a.data, src_offset=column,
                                       is_blocking=False))
        pending.append(cl.enqueue_copy(queue, send_right, a.data, src_offset=nyl * column,
                                       is_blocking=False))
        return pending[-1]

    def advance(a, b):
        """One step: b from a, then b's halo columns from the neighbours."""
        heat_block_cl.heat_cols(nx, nyl, 1, 1, 0.2, a, b, queue=queue)
        if nyl > 1:
            heat_block_cl.heat_cols(nx, nyl, nyl, nyl, 0.2, a, b, queue=queue)
        done = edges_to_host(b)
        if nyl > 2:
            heat_block_cl.heat_cols(nx, nyl, 2, nyl - 1, 0.2, a, b, queue=queue)
        swap_halos(b, done)

    swap_halos(u, edges_to_host(u))
    nsteps = 2 * ((steps + 1) // 2)
    times = np.zeros(nsteps)
    t0 = tstep = MPI.Wtime()
    for step in range(1, steps + 1, 2):
        if step == 3:     # the first two steps built the program
            queue.finish()
            comm.Barrier()
            t0 = tstep = MPI.Wtime()
        for k, (a, b) in enumerate(((u, unew), (unew, u))):
            advance(a, b)
            # every step waits for the device (its edge columns' copies): in the
            # steady state the host time of a step is its time on the device
            now = MPI.Wtime()
            times[step - 1 + k] = now - tstep
            tstep = now
    queue.finish()
    slowest = comm.reduce(MPI.Wtime() - t0, op=MPI.MAX, root=0)
    median = float(np.median(times[2:])) if steps > 2 else 0.0
    slowest_median = comm.reduce(median, op=MPI.MAX, root=0)

    mine = np.asfortranarray(u.get()[:, 1:nyl + 1]).ravel(order="F")
    field = np.empty((nx + 2) * ny) if rank == 0 else None
    sizes = [c * (nx + 2) for c in counts]
    comm.Gatherv(mine, [field, sizes, [sum(sizes[:r]) for r in range(nranks)], MPI.DOUBLE]
                 if rank == 0 else None, root=0)
    if rank == 0:
        grid = field.reshape((nx + 2, ny), order="F")
        print(f"grid {nx} x {ny}, steps {2 * ((steps + 1) // 2)}, ranks {nranks}")
        print(f"sum {grid.sum():.17e}")
        print(f"center {grid[nx // 2, ny // 2 - 1]:.17e}")
        print(f"max {grid[1:nx + 1, :].max():.17e}")
        if steps > 2:
            print(f"seconds per step {slowest / (nsteps - 2):.5e}")
            print(f"median seconds per step {slowest_median:.5e}")
        if out:
            field.tofile(out)


if __name__ == "__main__":
    args = sys.argv[1:]
    main(*map(int, args[:3]), *args[3:4])
