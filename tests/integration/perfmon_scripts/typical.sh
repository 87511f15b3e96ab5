#!/bin/bash

#SBATCH --time=00:30:00
#SBATCH -J sdp-metrics-test
#SBATCH --nodes=2
#SBATCH --ntasks=2
#SBATCH --no-requeue
#SBATCH --exclusive
#SBATCH --output="slurm-%J.out"

WORK_DIR={D}

# Make sure we have the right working directory
cd $WORK_DIR

echo -e "JobID: $SLURM_JOB_ID\n======"
echo "Time: `date`"
echo "Running on master node: `hostname`"
echo "Current directory: `pwd`"

srun -n $SLURM_JOB_NUM_NODES --ntasks-per-node 1 jobscope perfmon &
# mpirun --map-by node -np $SLURM_JOB_NUM_NODES perfmon &
# test: mpirun -np ${SLURM_JOB_NUM_NODES} ./matmul 2000
srun -n ${SLURM_JOB_NUM_NODES} --ntasks-per-node 1 ./matmul 2000

wait
