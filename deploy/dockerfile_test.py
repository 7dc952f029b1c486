#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks deploy/Dockerfile without docker (CI and the dev machines have no docker daemon).

Usage: deploy/dockerfile_test.py [--dockerfile FILE]
Exit 0 when every check passes, 1 when one fails.

What it checks: the build stage installs its packages through scripts/setup.sh (the one list of
build packages), builds with a preset of CMakePresets.json and options CMake declares, and
packages it with cpack as the Debian package users install (cmake/Packaging.cmake); the runtime
stage installs that package and nothing else (apt-get brings the libraries its Depends name:
deploy/deb_package_test.sh checks that they are the ones gpumon links), runs `gpumon serve` as
a non-root user on 0.0.0.0 at serve's default port, which it exposes; .dockerignore and the
docs agree. What it cannot check: that the packages download and the build compiles (that
needs docker).
Standard library only.
"""
import argparse
import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
failures = []


def check(ok, what, detail=""):
    print(("ok   " if ok else "FAIL ") + what + (f": {detail}" if detail and not ok else ""))
    if not ok:
        failures.append(what)
    return ok


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def parse_dockerfile(text):
    """[{base, name, instrs: [(KEYWORD, args)]}], one per FROM; continuations joined."""
    stages, logical = [], ""
    for line in text.splitlines():
        if not logical and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if logical and line.lstrip().startswith("#"):
            continue  # a comment inside a continued instruction
        if line.rstrip().endswith("\\"):
            logical += line.rstrip()[:-1] + " "
            continue
        logical += line
        keyword, _, args = logical.strip().partition(" ")
        logical = ""
        keyword, args = keyword.upper(), args.strip()
        if keyword == "FROM":
            words = args.split()
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            stages.append({"base": words[0], "name": name, "instrs": []})
        elif stages:
            stages[-1]["instrs"].append((keyword, args))
    return stages


def instrs(stage, keyword):
    return [a for k, a in stage["instrs"] if k == keyword]


def exec_form(args):
    try:
        v = json.loads(args)
        return v if isinstance(v, list) and all(isinstance(x, str) for x in v) else None
    except ValueError:
        return None


def commands(run_args):
    """The simple commands of a RUN line, each a list of words."""
    return [shlex.split(c) for c in re.split(r"&&|\|\||;", run_args) if c.strip()]


def apt_installs(stage):
    pkgs = []
    for run in instrs(stage, "RUN"):
        for words in commands(run):
            if words[:2] == ["apt-get", "install"]:
                pkgs += [w for w in words[2:] if not w.startswith("-")]
    return pkgs


def bash_array(text, name):
    m = re.search(rf"^{name}=\(([^)]*)\)", text, re.M)
    return m.group(1).split() if m else []


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dockerfile", default=os.path.join(ROOT, "deploy", "Dockerfile"))
    opt = ap.parse_args()

    with open(opt.dockerfile, encoding="utf-8") as f:
        stages = parse_dockerfile(f.read())
    if not check(len(stages) >= 2, "multi-stage: a build stage and a runtime stage",
                 f"{len(stages)} FROM"):
        return 1
    build = next((s for s in stages if s["name"] == "build"), stages[0])
    runtime = stages[-1]
    debian12 = re.compile(r"^(docker\.io/)?(library/)?debian:(12|bookworm)(-slim)?(@sha256:\w+)?$")
    check(bool(debian12.match(build["base"])), "build stage is Debian 12", build["base"])
    check(bool(re.match(r"^(docker\.io/)?(library/)?debian:(12|bookworm)-slim(@sha256:\w+)?$",
                        runtime["base"])), "runtime stage is debian:12-slim", runtime["base"])

    # --- build stage: packages from scripts/setup.sh, the project's CMake preset -------------
    setup = read("scripts/setup.sh")
    runs = [w for r in instrs(build, "RUN") for w in commands(r)]
    setup_runs = [w for w in runs if w and w[0].endswith("scripts/setup.sh")]
    check(bool(setup_runs) and all("--build-only" in w for w in setup_runs),
          "build stage installs its packages with scripts/setup.sh --build-only")
    for w in setup_runs:
        for flag in (a for a in w[1:] if a.startswith("--")):
            check(re.search(rf"^\s*{re.escape(flag)}\)", setup, re.M) is not None,
                  f"scripts/setup.sh accepts {flag}")
    known = set(bash_array(setup, "build_pkgs")) | set(bash_array(setup, "test_pkgs")) | {"npm"}
    check(bool(bash_array(setup, "build_pkgs")), "scripts/setup.sh has its build_pkgs list")
    extra = [p for p in apt_installs(build) if p not in known]
    check(not extra, "build stage installs no package outside scripts/setup.sh's lists",
          " ".join(extra))
    for c in instrs(build, "COPY"):
        words = [w for w in c.split() if not w.startswith("--")]
        for src in words[:-1] if len(words) > 1 and words[0] != "." else []:
            check(os.path.exists(os.path.join(ROOT, src)), f"COPY source {src} exists")

    presets = json.loads(read("CMakePresets.json"))
    configure = {p["name"]: p for p in presets["configurePresets"] if not p.get("hidden")}
    build_presets = {p["name"]: p for p in presets.get("buildPresets", [])}
    workdir = (instrs(build, "WORKDIR") or ["/"])[-1]
    cmake_lines = [w for w in runs if w and w[0] == "cmake"]
    conf = [w for w in cmake_lines if "--preset" in w and "--build" not in w]
    bld = [w for w in cmake_lines if "--build" in w]
    packs = [w for w in runs if w and w[0] == "cpack"]
    out_dir = None
    if check(len(conf) == 1 and len(bld) == 1 and len(packs) == 1,
             "build stage configures and builds with cmake and packages with cpack, once each"):
        name = conf[0][conf[0].index("--preset") + 1]
        check(name in configure, f"configure preset {name!r} is in CMakePresets.json")
        check("--preset" in bld[0] and build_presets.get(bld[0][bld[0].index("--preset") + 1],
                                                         {}).get("configurePreset") == name,
              f"build preset configures {name!r}")
        cmake_text = ""
        for d, dirs, files in os.walk(ROOT):
            dirs[:] = [x for x in dirs if not x.startswith(("build", ".")) and x != "node_modules"]
            if "CMakeLists.txt" in files:
                cmake_text += read(os.path.join(os.path.relpath(d, ROOT), "CMakeLists.txt"))
        for d in (a[2:].split("=")[0].split(":")[0] for a in conf[0] if a.startswith("-D")):
            check(re.search(rf"(option|set)\(\s*{d}\b", cmake_text) is not None,
                  f"-D{d} is an option CMake declares")
        binary_dir = configure.get(name, {}).get("binaryDir", "").replace("${sourceDir}", workdir)
        cds = [w[1] for w in runs if len(w) == 2 and w[0] == "cd"]
        check(any(os.path.normpath(os.path.join(workdir, c)) == os.path.normpath(binary_dir)
                  for c in cds), f"cpack runs in the preset's build folder {binary_dir}")
        pack = packs[0]
        check("-G" in pack and pack[pack.index("-G") + 1] == "DEB", "cpack makes the .deb (-G DEB)")
        if "-B" in pack:
            out_dir = pack[pack.index("-B") + 1]
    packaging = read("cmake/Packaging.cmake")
    check(re.search(r"set\(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON\)", packaging) is not None,
          "the .deb's Depends come from the libraries gpumon links (dpkg-shlibdeps)")
    check(re.search(r"install\(TARGETS gpumon RUNTIME DESTINATION \$\{CMAKE_INSTALL_BINDIR\}\)",
                    read("src/cli/CMakeLists.txt")) is not None
          and re.search(r"set\(CPACK_PACKAGING_INSTALL_PREFIX /usr\)", packaging) is not None,
          "the .deb installs gpumon as /usr/bin/gpumon")

    # --- runtime stage: the package, how it runs ---------------------------------------------
    want_src = f"{out_dir}/gpumon_*.deb" if out_dir else None
    copies = [c.split() for c in instrs(runtime, "COPY") if "--from=" in c]
    copied = [c for c in copies if c[-2] == want_src]
    check(bool(copied), f"runtime stage copies {want_src} from the build stage")
    dest = copied[0][-1] if copied else ""
    deb = (dest + "gpumon_*.deb") if dest.endswith("/") else dest
    pkgs = apt_installs(runtime)
    check(pkgs == [deb], f"runtime stage installs {deb} and nothing else with apt-get",
          " ".join(pkgs))
    check(bool(re.search(r"rm -rf /var/lib/apt/lists", " ".join(instrs(runtime, "RUN")))),
          "runtime stage removes apt's lists")

    entry = exec_form((instrs(runtime, "ENTRYPOINT") or [""])[-1])
    check(entry is not None and len(entry) == 2 and entry == ["gpumon", "serve"],
          'ENTRYPOINT is ["gpumon", "serve"] (exec form)', str(entry))

    serve_h = read("src/cli/serve_command.h")
    m = re.search(r'std::string listen = "([\d.]+):(\d+)";', serve_h)
    default_port = m.group(2) if m else None
    check(default_port is not None, "serve's default address found in src/cli/serve_command.h")
    check(f"Default port **{default_port}**" in read("docs/exporter.md"),
          f"docs/exporter.md names the default port {default_port}")
    cmd = exec_form((instrs(runtime, "CMD") or [""])[-1]) or []
    listen = cmd[cmd.index("--listen") + 1] if "--listen" in cmd[:-1] else None
    check(listen == f"0.0.0.0:{default_port}",
          f"CMD listens on 0.0.0.0:{default_port} (publishable from the container)", str(cmd))
    exposed = [p.split("/")[0] for e in instrs(runtime, "EXPOSE") for p in e.split()]
    check(exposed == [default_port], f"EXPOSE {default_port}", " ".join(exposed))

    users = instrs(runtime, "USER")
    user = users[-1].split(":")[0] if users else "root"
    check(user not in ("root", "0"), "runtime stage runs as a non-root user", user)
    if user.isdigit():
        uids = re.findall(r"useradd\b.*--uid (\d+)", " ".join(instrs(runtime, "RUN")))
        check(user in uids, f"uid {user} is created with useradd")

    env = " ".join(instrs(runtime, "ENV"))
    check(re.search(r"\bNVIDIA_VISIBLE_DEVICES=\S+", env) is not None,
          "ENV NVIDIA_VISIBLE_DEVICES is set")
    caps = re.search(r"\bNVIDIA_DRIVER_CAPABILITIES=(\S+)", env)
    check(caps is not None and re.search(r"\b(utility|all)\b", caps.group(1)) is not None,
          "ENV NVIDIA_DRIVER_CAPABILITIES includes utility (NVML)")

    # --- build context and docs --------------------------------------------------------------
    ignore = [l.strip() for l in read(".dockerignore").splitlines()
              if l.strip() and not l.startswith("#")]
    for must in (".git", "build", "web/node_modules"):
        check(any(fnmatch.fnmatch(must, p) for p in ignore), f".dockerignore excludes {must}")
    for needed_path in ("scripts/setup.sh", "CMakeLists.txt", "src", "testdata/scenarios"):
        check(not any(fnmatch.fnmatch(needed_path, p) for p in ignore),
              f".dockerignore keeps {needed_path}")
    for doc in ("README.md", "deploy/README.md"):
        text = read(doc)
        check("docker build -f deploy/Dockerfile" in text, f"{doc} shows the docker build")
        ports = re.findall(r"docker run\b.*?-p (?:[\d.]+:)?\d+:(\d+)", text)
        check(bool(ports) and all(p == default_port for p in ports),
              f"{doc}: docker run publishes container port {default_port}", " ".join(ports))

    if shutil.which("hadolint"):
        r = subprocess.run(["hadolint", "--failure-threshold", "error", opt.dockerfile],
                           capture_output=True, text=True)
        print(r.stdout, end="")
        check(r.returncode == 0, "hadolint finds no error")
    else:
        print("note hadolint not installed (not in Debian 12): lint skipped")

    print(f"dockerfile_test: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
