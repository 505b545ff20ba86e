"""Packaging: uarch as a Meson subproject, installed, and found by
pkg-config and by CMake's find_package; the build's own install into a
DESTDIR, tools included."""
import os
import re
import shutil
import tempfile

from checklib import args, base_env, fail, failures, run, show, skip
from common import bindings, find_info


# ---- packaging: subproject, install, pkg-config, CMake ------------------------

def check_subproject_and_install():
    meson = shutil.which("meson")
    if not meson:
        skip("subproject/install: meson is not on PATH")
    src_root = os.environ["UARCH_SOURCE_ROOT"]
    here = os.path.dirname(os.path.abspath(__file__))
    want = bindings(run([args.shared]).stdout)
    with tempfile.TemporaryDirectory(prefix="uarch-consumer-") as t:
        proj = os.path.join(t, "consumer")
        os.makedirs(os.path.join(proj, "subprojects"))
        shutil.copy(os.path.join(here, "subproject_consumer", "meson.build"), proj)
        shutil.copy(os.path.join(here, "consumer.c"), proj)
        os.symlink(src_root, os.path.join(proj, "subprojects", "uarch"))
        prefix = os.path.join(t, "prefix")
        b = os.path.join(t, "b")
        env = base_env()
        steps = [[meson, "setup", b, proj, "--prefix=" + prefix, "--force-fallback-for=uarch",
                  "-Dbuildtype=release"],
                 ["ninja", "-C", b],
                 [meson, "install", "-C", b, "--quiet", "--no-rebuild"]]
        for s in steps:
            r = run(s, env, timeout=900)
            if r.returncode != 0:
                show(r, " ".join(s))
                fail(f"{' '.join(s[:2])} failed")
                return
        r = run([os.path.join(b, "consumer")])
        show(r, "consumer built with uarch as a Meson subproject")
        if r.returncode != 0 or bindings(r.stdout) != want:
            fail("the subproject consumer's bindings differ from the built library's")

        # The installed files: headers, libraries, pc file, CMake package.
        found = {}
        for dp, _, files in os.walk(prefix):
            for f in files:
                found.setdefault(f, os.path.join(dp, f))
        print("installed: " + " ".join(sorted(os.path.relpath(v, prefix) for v in found.values())))
        for f in ("uarch.h", "libuarch.so.0", "libuarch.a", "libuarch_preload.so", "uarch.pc",
                  "uarchConfig.cmake", "uarchConfigVersion.cmake"):
            if f not in found:
                fail(f"meson install did not install {f}")
        if failures:
            return
        libdir = os.path.dirname(found["libuarch.so.0"])
        pcdir = os.path.dirname(found["uarch.pc"])
        pkg = shutil.which("pkg-config")
        cc = shutil.which("cc") or shutil.which("gcc")
        if pkg and cc:
            penv = base_env(PKG_CONFIG_PATH=pcdir)
            r = run([pkg, "--cflags", "--libs", "uarch"], penv)
            flags = r.stdout.decode().split()
            print(f"pkg-config --cflags --libs uarch: {' '.join(flags)}")
            exe = os.path.join(t, "pc-consumer")
            r2 = run([cc, os.path.join(here, "consumer.c"), "-o", exe] + flags + ["-Wl,-rpath," + libdir])
            if r.returncode or r2.returncode:
                show(r2, "cc with pkg-config flags")
                fail("building against the pkg-config file failed")
            else:
                r = run([exe])
                show(r, "pkg-config consumer")
                if r.returncode or bindings(r.stdout) != want:
                    fail("the pkg-config consumer's bindings differ")
        else:
            fail("pkg-config or cc missing")
        cmake = shutil.which("cmake")
        if not cmake:
            fail("cmake is not installed (Debian package cmake)")
            return
        cb = os.path.join(t, "cmake-build")
        for s in ([cmake, "-S", os.path.join(here, "cmake_consumer"), "-B", cb, "-DCMAKE_PREFIX_PATH=" + prefix,
                   "-DCONSUMER_SOURCE=" + os.path.join(here, "consumer.c"), "-DCMAKE_BUILD_TYPE=Release"],
                  [cmake, "--build", cb]):
            r = run(s, timeout=600)
            if r.returncode:
                show(r, " ".join(s[:2]))
                fail("the CMake find_package(uarch) consumer did not build")
                return
        for exe in ("consumer", "consumer_static", "consumer_wrap"):
            r = run([os.path.join(cb, exe)])
            show(r, f"CMake consumer {exe}")
            if r.returncode or bindings(r.stdout) != want:
                fail(f"the CMake consumer {exe} failed or its bindings differ")
        needed = run(["readelf", "-dW", os.path.join(cb, "consumer_static")]).stdout.decode()
        if "libuarch" in needed:
            fail("uarch::static linked the shared library")
        wrapped = run(["nm", os.path.join(cb, "consumer_wrap")]).stdout.decode()
        if not re.search(r" [iT] __wrap_memcpy$", wrapped, re.M):
            fail("uarch::wrap did not link __wrap_memcpy into the program")

        # The project's own build installs into a DESTDIR too, tools included.
        dest = os.path.join(t, "destdir")
        r = run([meson, "install", "-C", os.environ["UARCH_BUILD_ROOT"], "--destdir", dest,
                 "--no-rebuild", "--quiet"], timeout=300)
        if r.returncode:
            show(r, "meson install --destdir")
            fail("meson install --destdir of the build failed")
            return
        names = set()
        for dp, _, files in os.walk(dest):
            names.update(files)
        want_files = ["uarch.h", "libuarch.so.0", "libuarch.a", "libuarch_preload.so", "uarch.pc",
                      "uarchConfig.cmake"]
        if find_info():
            want_files.append("uarch-info")
        missing = [f for f in want_files if f not in names]
        print(f"meson install --destdir: {len(names)} files; missing: {missing or 'none'}")
        if missing:
            fail(f"meson install --destdir did not install {missing}")


CHECKS = {
    "subproject-install": check_subproject_and_install,
}

# Checks a cross build cannot make, and why (e2e.py skips them there).
HOST_ONLY = {
    "subproject-install": "packaging builds for this machine; the native build checks it",
}
