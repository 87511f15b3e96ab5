#!/bin/bash

#SBATCH --time=00:30:00
#SBATCH -J sdp-metrics-test
#SBATCH --nodes=3
#SBATCH --ntasks=3
#SBATCH --no-requeue
#SBATCH --exclusive
#SBATCH --output="slurm-%J.out"

WORK_DIR={D}
MON_DIR=/path/to/ska-sdp-montor-cpu-metrics

# Make sure we have the right working directory
cd $WORK_DIR

echo -e "JobID: $SLURM_JOB_ID\n======"
echo "Time: `date`"
echo "Running on master node: `hostname`"
echo "Current directory: `pwd`"

srun -n $SLURM_JOB_NUM_NODES --ntasks-per-node 1 jobscope perfmon -d {SAVE} -p pm -l srun -i 1 -c 2 -r -e csv hdf5 pickle parquet feather orc --system sys-a --partition part-b --env env-c --name test-d -v &
export MON_PID=$!
# mpirun --map-by node -np $SLURM_JOB_NUM_NODES perfmon &
# test: mpirun -np ${SLURM_JOB_NUM_NODES} ./matmul 2000
srun -n ${SLURM_JOB_NUM_NODES} --ntasks-per-node 1 ./matmul 6000
echo "FINISHED" > .ipc-$SLURM_JOB_ID

wait $MON_PID
