"""How commands run: the thread policy, the kernels compiled once (warmup), and the resident worker (the caller's
side and the server)."""
