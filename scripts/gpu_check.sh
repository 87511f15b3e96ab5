#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GPU check on a real NVIDIA machine (docs/GPU.md, "Checking on a real GPU"): runs a PyTorch job that
# allocates a known amount of GPU memory and keeps one GPU busy, under `jobscope run`, while nvidia-smi samples
# the same GPU every second; then compares jobscope's summary with nvidia-smi and with what the job did.
#
#   scripts/gpu_check.sh [-b JOBSCOPE] [-g GPU_INDEX] [-m GIB] [-t SECONDS] [-o DIR]
#
# Needs: nvidia-smi, python3 with torch (CUDA build), a built jobscope (default build/jobscope). Exits 0 when
# every check passes, 1 when one fails, 2 when something it needs is missing. The recording, both summaries
# and nvidia-smi's CSV stay in DIR (default: a new directory under /tmp) for a closer look.
set -euo pipefail

JOBSCOPE=build/jobscope
GPU=0
GIB=4
SECS=30
OUT=""
while getopts "b:g:m:t:o:h" opt; do
    case "$opt" in
    b) JOBSCOPE=$OPTARG ;;
    g) GPU=$OPTARG ;;
    m) GIB=$OPTARG ;;
    t) SECS=$OPTARG ;;
    o) OUT=$OPTARG ;;
    *) sed -n '3,12p' "$0"; exit 2 ;;
    esac
done
for tool in nvidia-smi python3; do
    command -v "$tool" >/dev/null || { echo "gpu_check: $tool not found" >&2; exit 2; }
done
[ -x "$JOBSCOPE" ] || { echo "gpu_check: $JOBSCOPE is not an executable (build first, or -b PATH)" >&2; exit 2; }
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
    { echo "gpu_check: python3 cannot use CUDA through torch" >&2; exit 2; }
OUT=${OUT:-$(mktemp -d /tmp/jobscope-gpu-check-XXXXXX)}
mkdir -p "$OUT"
UUID=$(nvidia-smi -i "$GPU" --query-gpu=uuid --format=csv,noheader)

# The job: GIB GiB in one tensor (plus the CUDA context), then matrix products for SECS seconds, in a child
# process as well so that the descendants' share is exercised: the child allocates 1 GiB and sleeps.
cat >"$OUT/job.py" <<'EOF'
import os, subprocess, sys, time
import torch
gib, secs = float(sys.argv[1]), float(sys.argv[2])
if len(sys.argv) > 3:  # the child
    x = torch.empty(int(1 * 2**30), dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    time.sleep(secs)
    sys.exit(0)
hold = torch.empty(int(gib * 2**30), dtype=torch.uint8, device="cuda")
child = subprocess.Popen([sys.executable, __file__, "1", str(secs), "child"])
a = torch.randn(8192, 8192, device="cuda")
end = time.monotonic() + secs
while time.monotonic() < end:
    b = a @ a
    torch.cuda.synchronize()
print(f"job: main {os.getpid()}, child {child.pid}", file=sys.stderr)
child.wait()
EOF

nvidia-smi -i "$GPU" --query-gpu=timestamp,utilization.gpu,memory.used,power.draw,temperature.gpu,clocks.sm \
    --format=csv,noheader,nounits -lms 1000 >"$OUT/smi.csv" &
SMI=$!
nvidia-smi -i "$GPU" --query-compute-apps=pid,used_memory --format=csv,noheader,nounits -lms 1000 \
    >"$OUT/smi_apps.csv" &
SMI_APPS=$!
trap 'kill $SMI $SMI_APPS 2>/dev/null || true' EXIT
sleep 2
CUDA_VISIBLE_DEVICES=$UUID "$JOBSCOPE" run -i 1s -o "$OUT/run.db" --force --summary-json "$OUT/summary.json" \
    --summary "$OUT/summary.txt" -- python3 "$OUT/job.py" "$GIB" "$SECS"
sleep 2
kill $SMI $SMI_APPS 2>/dev/null || true
wait $SMI $SMI_APPS 2>/dev/null || true
trap - EXIT
"$JOBSCOPE" export --format csv --scope gpu -o "$OUT/gpu.csv" --force "$OUT/run.db"

python3 - "$OUT" "$GIB" "$SECS" <<'EOF'
import csv, json, sys
out, gib, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
s = json.load(open(f"{out}/summary.json"))
g = s["gpu"]
d = g["devices"][0]
rows = []
for r in csv.reader(open(f"{out}/smi.csv")):
    try:
        rows.append([float(x) for x in r[1:]])
    except ValueError:
        pass
busy = [r for r in rows if r[0] >= 50]  # nvidia-smi samples while the job computed
apps = {}
for r in csv.reader(open(f"{out}/smi_apps.csv")):
    try:
        apps[int(r[0])] = max(apps.get(int(r[0]), 0), float(r[1]) * 2**20)
    except (ValueError, IndexError):
        pass
fails = 0
def check(name, ok, detail):
    global fails
    fails += not ok
    print(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")
GiB = 2**30
main = d["peak_memory_bytes"]["job"]["main"]
desc = d["peak_memory_bytes"]["job"]["descendants"]
check("job memory, main", main is not None and gib * GiB <= main <= (gib + 2) * GiB,
      f"jobscope {main / GiB:.2f} GiB for a {gib} GiB tensor plus the CUDA context")
check("job memory, descendants", desc is not None and 1 * GiB <= desc <= 3 * GiB,
      f"jobscope {desc / GiB:.2f} GiB for the child's 1 GiB plus its context")
smi_apps = sorted(apps.values(), reverse=True)
if smi_apps:
    check("job memory vs nvidia-smi --query-compute-apps", abs(main - smi_apps[0]) <= 64 * 2**20,
          f"jobscope {main / GiB:.3f} GiB, nvidia-smi {smi_apps[0] / GiB:.3f} GiB (largest process)")
if busy:
    util = sum(r[0] for r in busy) / len(busy) / 100
    power = sum(r[2] for r in busy) / len(busy)
    check("utilisation max", d["utilization"]["max"] >= 0.9, f"jobscope {d['utilization']['max']:.2f}")
    check("utilisation while busy vs nvidia-smi", abs(d["utilization"]["max"] - max(r[0] for r in busy) / 100) <= 0.1,
          f"jobscope max {d['utilization']['max']:.2f}, nvidia-smi max {max(r[0] for r in busy) / 100:.2f} (mean {util:.2f})")
    check("power max vs nvidia-smi", abs(d["power_w"]["max"] - max(r[2] for r in busy)) <= 0.1 * max(r[2] for r in busy),
          f"jobscope {d['power_w']['max']:.0f} W, nvidia-smi {max(r[2] for r in busy):.0f} W (mean {power:.0f} W)")
    check("job utilisation (process samples)", (d["job_utilization"]["max"] or 0) >= 0.8,
          f"jobscope job max {d['job_utilization']['max']}")
    # energy: the counter against nvidia-smi's power integrated over the run's wall time
    e_smi = power * s["wall_time_s"]
    check("energy vs nvidia-smi power x time", d["energy_j"] is not None and abs(d["energy_j"] - e_smi) <= 0.15 * e_smi,
          f"jobscope {d['energy_j']:.0f} J [{d['energy_method']}], nvidia-smi ~{e_smi:.0f} J")
else:
    check("nvidia-smi saw the job", False, "no sample of 50% utilisation or more")
check("attribution", g["job"]["attribution"]["method"] == "pid", g["job"]["attribution"]["description"])
print(f"files in {out}: summary.txt, summary.json, run.db, gpu.csv, smi.csv, smi_apps.csv")
sys.exit(1 if fails else 0)
EOF
