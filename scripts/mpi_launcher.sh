# Sourced by the data-parallel scripts: MPIRUN, the launcher command line
# for N processes on this machine. --oversubscribe lets a 2-core machine run
# 3 processes; Open MPI refuses to start as root without --allow-run-as-root;
# one thread per process keeps the processes from fighting for the cores.
command -v mpirun > /dev/null || { echo "mpirun is missing: apt-get install -y openmpi-bin libopenmpi-dev" >&2; exit 2; }
MPIRUN=(mpirun --oversubscribe -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1)
[ "$(id -u)" -eq 0 ] && MPIRUN+=(--allow-run-as-root)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
