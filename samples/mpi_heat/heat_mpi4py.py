"""samples/mpi_heat driven from Python: the time loop of main.F90 with mpi4py,
the kernel through the Python glue of heat_block.f90, one device per rank.

    f2loopy translate samples/mpi_heat/heat_block.f90      # writes heat_block_cl.py
    mpirun -np 2 python3 samples/mpi_heat/heat_mpi4py.py [nx ny steps [file]]

Each rank keeps its block of the field (nx+2 x its columns + 2 halo columns) on its
device as pyopencl arrays for the whole run; a halo exchange copies its two edge
columns off the device into host buffers (two copies, the second waits), sends
them with MPI and copies the two it receives into the halo columns (without waiting:
the queue runs in order, and the next exchange waits before it reuses the buffers).
Rank 0 gathers the field and writes it as main.F90 does, and prints the seconds per
step of the slowest rank as main.F90 does (timed from the third step on).
"""

import sys

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from mpi4py import MPI

import heat_block_cl


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
    send_left, send_right, recv_left, recv_right = (np.empty(nx + 2) for _ in range(4))

    def exchange(a):
        """Fill the halo columns of a with the neighbours' edge columns."""
        # the second copy waits (the queue runs in order, so both are done)
        cl.enqueue_copy(queue, send_left, a.data, src_offset=column, is_blocking=False)
        cl.enqueue_copy(queue, send_right, a.data, src_offset=nyl * column)
        comm.Sendrecv(send_right, dest=right, sendtag=1, recvbuf=recv_left, source=left,
                      recvtag=1)
        comm.Sendrecv(send_left, dest=left, sendtag=2, recvbuf=recv_right, source=right,
                      recvtag=2)
        if left != MPI.PROC_NULL:
            cl.enqueue_copy(queue, a.data, recv_left, dst_offset=0, is_blocking=False)
        if right != MPI.PROC_NULL:
            cl.enqueue_copy(queue, a.data, recv_right, dst_offset=(nyl + 1) * column,
                            is_blocking=False)

    t0 = MPI.Wtime()
    for step in range(1, steps + 1, 2):
        if step == 3:     # the first two steps built the program
            queue.finish()
            comm.Barrier()
            t0 = MPI.Wtime()
        exchange(u)
        heat_block_cl.heat_step(nx, nyl, 0.2, u, unew, queue=queue)
        exchange(unew)
        heat_block_cl.heat_step(nx, nyl, 0.2, unew, u, queue=queue)
    queue.finish()
    slowest = comm.reduce(MPI.Wtime() - t0, op=MPI.MAX, root=0)

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
            print(f"seconds per step {slowest / (2 * ((steps + 1) // 2) - 2):.5e}")
        if out:
            field.tofile(out)


if __name__ == "__main__":
    args = sys.argv[1:]
    main(*map(int, args[:3]), *args[3:4])
