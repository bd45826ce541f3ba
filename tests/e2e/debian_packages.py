"""What dpkg knows of the installed Debian packages, for the packaging tests: each package's
dependencies and files, and the closure of a list of packages over Depends and Pre-Depends
(what `apt-get install` of them would bring onto a bare system, seen from the packages
installed here)."""
import glob
import os
import re
import subprocess


def installed():
    """{package: (depends, provides)} of every installed package: depends a list of
    alternatives (lists of names), provides a list of names. Architecture qualifiers and
    version constraints are dropped."""
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package}\t${db:Status-Status}\t${Pre-Depends}\t"
         "${Depends}\t${Provides}\n"], capture_output=True, text=True, check=True).stdout
    packages = {}

    def names(field):
        return [re.match(r"\s*([^\s:(]+)", alt).group(1) for alt in field.split("|")
                if alt.strip()]

    for line in out.splitlines():
        name, status, pre, depends, provides = line.split("\t")
        if status != "installed":
            continue
        relations = [names(r) for r in (pre + "," + depends).split(",") if r.strip()]
        packages[name] = (relations, [n for p in provides.split(",") if p.strip()
                                      for n in names(p)])
    return packages


def closure(roots):
    """The installed packages that `roots` need, themselves included: for each dependency
    the first alternative installed here (by name, or through Provides). A root that is not
    installed raises KeyError."""
    packages = installed()
    providers = {}
    for name, (_, provides) in packages.items():
        for p in [name] + provides:
            providers.setdefault(p, []).append(name)
    missing = [r for r in roots if r not in packages]
    if missing:
        raise KeyError(f"not installed here: {', '.join(missing)}")
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for alternatives in packages[name][0]:
            for alt in alternatives:
                if alt in providers:
                    todo.extend(providers[alt])
                    break
    return seen


def files_by_package():
    """{path: package} for every file dpkg lists as installed by a package."""
    owners = {}
    for path in glob.glob("/var/lib/dpkg/info/*.list"):
        package = os.path.basename(path)[:-len(".list")].split(":")[0]
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                owners.setdefault(line.rstrip("\n"), package)
    return owners
