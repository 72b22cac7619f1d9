"""transformers and posgeom on one Hugging Face cache (issue 37's acceptance), run in the
oracle virtual environment by tools/hub-interop:

1. posgeom downloads the bundled default model from a local hub (tests/support/local_hub.py)
   into an empty cache; transformers loads it from there with local_files_only=True.
2. transformers downloads it from the same hub into another empty cache; posgeom reads that
   one with HF_HUB_OFFLINE=1.
Each side's hidden states for the same ids are compared; exits 1 when they differ by more
than 1e-5.
"""
import json
import os
import subprocess
import sys
import tempfile
import time


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POSGEOM = sys.argv[1]
TOLERANCE = 1e-5


def start_hub(tmp):
    with open(os.path.join(tmp, "repos.json"), "w") as f:
        json.dump({"org/default": {"revisions": {"main": os.path.join(ROOT, "models", "default")}}}, f)
    port_file = os.path.join(tmp, "port")
    server = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "support", "local_hub.py"),
                               os.path.join(tmp, "repos.json"), "--port-file", port_file])
    for _ in range(300):
        if os.path.exists(port_file):
            break
        time.sleep(0.02)
    with open(port_file) as f:
        return server, "http://127.0.0.1:" + f.read()


def posgeom(args, env):
    r = subprocess.run([POSGEOM] + args, env=dict(os.environ, **env), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("posgeom " + " ".join(args) + " failed: " + r.stderr)
    return r.stdout.strip()


def transformers_hidden(cache, ids, local_only):
    import torch
    from huggingface_hub import hf_hub_download
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained("org/default", cache_dir=cache, local_files_only=local_only,
                                                 dtype=torch.float32)
    # The default model's tokenizer.json is posgeom's own format, not one transformers loads:
    # the file itself is what must be there.
    hf_hub_download("org/default", "tokenizer.json", cache_dir=cache, local_files_only=local_only)
    with torch.no_grad():
        out = model(input_ids=ids, output_hidden_states=True)
    return out.hidden_states


def posgeom_hidden(cache, ids_path, out_path, hub):
    posgeom(["forward", "--model", "org/default", "--ids", ids_path, "--out", out_path, "--no-logits"],
            {"HF_HUB_CACHE": cache, "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": hub})
    from safetensors.torch import load_file
    tensors = load_file(out_path)
    layers = sum(1 for name in tensors if name.startswith("hidden."))
    # transformers' last hidden state is after the final norm: posgeom's final_norm.
    return [tensors["hidden.%d" % layer] for layer in range(layers - 1)] + [tensors["final_norm"]]


def worst(theirs, ours):
    if len(theirs) != len(ours):
        sys.exit("transformers gives %d hidden states, posgeom %d" % (len(theirs), len(ours)))
    return max(float((a - b).abs().max()) for a, b in zip(theirs, ours))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        server, hub = start_hub(tmp)
        # huggingface_hub reads HF_ENDPOINT when imported: set before torch and transformers come in.
        os.environ["HF_ENDPOINT"] = hub
        os.environ.pop("HF_HUB_OFFLINE", None)
        import torch
        from safetensors.torch import save_file
        try:
            ids = torch.randint(0, 87, (2, 24), generator=torch.Generator().manual_seed(0))
            ids_path = os.path.join(tmp, "ids.safetensors")
            save_file({"input_ids": ids}, ids_path)
            ours_cache, theirs_cache = os.path.join(tmp, "ours"), os.path.join(tmp, "theirs")
            snapshot = posgeom(["download", "org/default"], {"HF_HUB_CACHE": ours_cache, "HF_ENDPOINT": hub, "HF_HUB_OFFLINE": "0"})
            loaded = transformers_hidden(ours_cache, ids, local_only=True)
            a = worst(loaded, posgeom_hidden(ours_cache, ids_path, os.path.join(tmp, "a.safetensors"), hub))
            print("posgeom downloaded %s; transformers loaded it offline: max |hidden difference| %.3g" % (snapshot, a))
            fetched = transformers_hidden(theirs_cache, ids, local_only=False)
            b = worst(fetched, posgeom_hidden(theirs_cache, ids_path, os.path.join(tmp, "b.safetensors"), hub))
            print("transformers downloaded into %s; posgeom read it offline: max |hidden difference| %.3g" % (theirs_cache, b))
        finally:
            server.kill()
    return 0 if max(a, b) <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
