"""The wheel's tag (everything else is in pyproject.toml). The libattnlab.so a wheel of `make python` carries is a
Linux library loaded with ctypes, not a Python extension: the wheel is py3-none-<platform>, never "any"."""
import sysconfig

from setuptools import setup

try:
    from setuptools.command.bdist_wheel import bdist_wheel  # setuptools ≥ 70
except ImportError:
    from wheel.bdist_wheel import bdist_wheel


class PlatformWheel(bdist_wheel):
    def get_tag(self):
        plat = self.plat_name or sysconfig.get_platform()
        return "py3", "none", plat.replace("-", "_").replace(".", "_")


setup(cmdclass={"bdist_wheel": PlatformWheel})
