#!/usr/bin/env python3
"""Closes the windows of a process the way a window manager does: a WM_DELETE_WINDOW client
message to each top-level window whose _NET_WM_PID is the given pid. Headless Xvfb has no
window manager, so this stands in for the close button. Exits 1 when no window was found.

Usage: wm_delete.py <pid>     (uses $DISPLAY; only libX11 through ctypes, no extra packages)
"""
import ctypes
import ctypes.util
import sys

x11 = ctypes.CDLL(ctypes.util.find_library("X11"))
Window = ctypes.c_ulong
Atom = ctypes.c_ulong


class ClientMessageData(ctypes.Union):
    _fields_ = [("l", ctypes.c_long * 5)]


class XClientMessageEvent(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("window", Window),
        ("message_type", Atom),
        ("format", ctypes.c_int),
        ("data", ClientMessageData),
    ]


class XEvent(ctypes.Union):
    _fields_ = [("xclient", XClientMessageEvent), ("pad", ctypes.c_long * 24)]


x11.XOpenDisplay.restype = ctypes.c_void_p
x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
x11.XDefaultRootWindow.restype = Window
x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x11.XInternAtom.restype = Atom
x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
x11.XQueryTree.argtypes = [ctypes.c_void_p, Window, ctypes.POINTER(Window), ctypes.POINTER(Window),
                           ctypes.POINTER(ctypes.POINTER(Window)), ctypes.POINTER(ctypes.c_uint)]
x11.XGetWindowProperty.argtypes = [ctypes.c_void_p, Window, Atom, ctypes.c_long, ctypes.c_long,
                                   ctypes.c_int, Atom, ctypes.POINTER(Atom), ctypes.POINTER(ctypes.c_int),
                                   ctypes.POINTER(ctypes.c_ulong), ctypes.POINTER(ctypes.c_ulong),
                                   ctypes.POINTER(ctypes.c_void_p)]
x11.XSendEvent.argtypes = [ctypes.c_void_p, Window, ctypes.c_int, ctypes.c_long, ctypes.POINTER(XEvent)]
x11.XFlush.argtypes = [ctypes.c_void_p]
x11.XFree.argtypes = [ctypes.c_void_p]


def window_pid(display, window, net_wm_pid):
    actual_type, actual_format = Atom(), ctypes.c_int()
    nitems, after, prop = ctypes.c_ulong(), ctypes.c_ulong(), ctypes.c_void_p()
    status = x11.XGetWindowProperty(display, window, net_wm_pid, 0, 1, 0, 6,  # XA_CARDINAL
                                    ctypes.byref(actual_type), ctypes.byref(actual_format),
                                    ctypes.byref(nitems), ctypes.byref(after), ctypes.byref(prop))
    if status != 0 or not prop.value or nitems.value == 0:
        return None
    pid = ctypes.cast(prop, ctypes.POINTER(ctypes.c_ulong))[0]
    x11.XFree(prop)
    return pid


def main():
    pid = int(sys.argv[1])
    display = x11.XOpenDisplay(None)
    if not display:
        return 2
    root = x11.XDefaultRootWindow(display)
    net_wm_pid = x11.XInternAtom(display, b"_NET_WM_PID", 0)
    protocols = x11.XInternAtom(display, b"WM_PROTOCOLS", 0)
    delete = x11.XInternAtom(display, b"WM_DELETE_WINDOW", 0)
    root_ret, parent_ret = Window(), Window()
    children, count = ctypes.POINTER(Window)(), ctypes.c_uint()
    x11.XQueryTree(display, root, ctypes.byref(root_ret), ctypes.byref(parent_ret),
                   ctypes.byref(children), ctypes.byref(count))
    sent = 0
    for i in range(count.value):
        window = children[i]
        if window_pid(display, window, net_wm_pid) != pid:
            continue
        event = XEvent()
        event.xclient.type = 33  # ClientMessage
        event.xclient.window = window
        event.xclient.message_type = protocols
        event.xclient.format = 32
        event.xclient.data.l[0] = delete
        event.xclient.data.l[1] = 0  # CurrentTime
        x11.XSendEvent(display, window, 0, 0, ctypes.byref(event))
        sent += 1
    x11.XFlush(display)
    return 0 if sent else 1


if __name__ == "__main__":
    sys.exit(main())
