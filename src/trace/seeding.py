"""Deterministic `random` for sandboxed programs, without importing it in the worker."""

class SeedOnImport:
    """A meta-path finder that seeds `random` with the sandbox seed when a program imports it.

    The worker does not import `random` itself: the module reseeds from the OS in every forked
    child (os.register_at_fork), which costs each child dozens of page faults even when the
    program never uses it. Programs that do get a module seeded exactly as `random.seed(SEED)`
    right after import, the same every run."""

    def __init__(self, seed):
        self.seed = seed

    def find_spec(self, name, path=None, target=None):
        if name != "random":
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _SeedingLoader(spec.loader, self.seed)
        return spec


class _SeedingLoader:
    def __init__(self, loader, seed):
        self.loader = loader
        self.seed = seed

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        module.seed(self.seed)
