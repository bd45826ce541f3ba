"""A minimal nn.Module look-alike: the module tree, parameters with shape/dtype/
requires_grad, and torch's named_modules/named_parameters semantics (remove_duplicate)."""


class dtype:  # noqa: N801 (torch's name)
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name

    __repr__ = __str__


bfloat16 = dtype("bfloat16")
float32 = dtype("float32")


class Size(tuple):
    pass


class Parameter:
    def __init__(self, *shape, dtype=bfloat16, requires_grad=True):
        self.shape = Size(shape)
        self.dtype = dtype
        self.requires_grad = requires_grad


class Module:
    def __init__(self):
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_parameters", {})

    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self._modules[name] = value
        elif isinstance(value, Parameter):
            self._parameters[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        for table in ("_modules", "_parameters"):
            members = self.__dict__.get(table, {})
            if name in members:
                return members[name]
        raise AttributeError(name)

    def __call__(self, *args):  # modules are callables, as in torch
        raise NotImplementedError

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                            remove_duplicate)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        for module_prefix, module in self.named_modules(prefix=prefix,
                                                        remove_duplicate=remove_duplicate):
            for name, param in module._parameters.items():
                if param in seen:
                    continue
                if remove_duplicate:
                    seen.add(param)
                yield module_prefix + ("." if module_prefix else "") + name, param


class ModuleList(Module):
    def __init__(self, modules):
        super().__init__()
        for i, module in enumerate(modules):
            self._modules[str(i)] = module


def module_class(name):
    """A new Module subclass called `name` (type(m).__name__ is what the exporter records)."""
    return type(name, (Module,), {})


def make(class_name, **members):
    """An instance of a Module subclass named class_name with the given children/params."""
    module = module_class(class_name)()
    for key, value in members.items():
        setattr(module, key, value)
    return module
