# SPDX-License-Identifier: MIT
"""Execute a notebook made of the cells in CELLS.json on a real kernel (nbclient, ipykernel) and write what
each cell printed and displayed to OUT.json: [{"source", "text", "html", "images", "errors"}, ...].

usage: run_notebook.py CELLS.json OUT.json [WORKDIR]

Used where the kernel must run as another user (runuser) or inside a SLURM job (sbatch): the whole notebook
client runs there, so the kernel is its child with that user's identity and that job's environment. Jupyter's
runtime, IPython's and matplotlib's folders go to a private temporary folder (no home folder needed).
"""
import json
import os
import sys
import tempfile


def main():
    cells_path, out_path = sys.argv[1], sys.argv[2]
    work = sys.argv[3] if len(sys.argv) > 3 else os.getcwd()
    scratch = tempfile.mkdtemp(prefix="jobscope-nb-")
    for var, sub in (("JUPYTER_RUNTIME_DIR", "rt"), ("JUPYTER_DATA_DIR", "data"), ("IPYTHONDIR", "ipy"),
                     ("MPLCONFIGDIR", "mpl"), ("JUPYTER_CONFIG_DIR", "cfg")):
        os.makedirs(os.path.join(scratch, sub), exist_ok=True)
        os.environ[var] = os.path.join(scratch, sub)
    import nbclient
    import nbformat

    with open(cells_path) as f:
        cells = json.load(f)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    client = nbclient.NotebookClient(nb, timeout=240, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": work}})
    client.execute()
    out = []
    for c in nb.cells:
        rec = {"source": c.source, "text": "", "html": [], "images": 0, "errors": []}
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream":
                rec["text"] += o["text"]
            elif o.get("output_type") == "error":
                rec["errors"].append(f"{o['ename']}: {o['evalue']}")
            else:
                data = o.get("data", {})
                if "text/html" in data:
                    rec["html"].append(data["text/html"])
                if "image/png" in data:
                    rec["images"] += 1
                elif "text/plain" in data and "text/html" not in data:
                    rec["text"] += data["text/plain"] + "\n"
        out.append(rec)
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
