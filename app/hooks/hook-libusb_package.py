"""libusb_package finds its libusb with importlib.resources, inside its own package folder.

The hook the package ships copies the library to the bundle's top folder instead, where
``libusb_package.get_libusb1_backend()`` does not look (so ``labrig devices`` reported
LABRIG_USB_BACKEND_MISSING when frozen). This hook, found first, keeps it in the package.
"""

from PyInstaller.utils.hooks import collect_dynamic_libs

binaries = collect_dynamic_libs("libusb_package")
