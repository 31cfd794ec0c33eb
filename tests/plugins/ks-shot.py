#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Screenshots of KernelShark under Xvfb for the GUI tests (Debian's python3
with python3-pil; PIL cannot read xwd, so its ZPixmap is decoded here).

  ks-shot.py png XWD PNG [X Y W H]
      convert an `xwd` dump to PNG, optionally cropped to a window
  ks-shot.py check XWD X Y W H
      print what the window at X,Y (W x H) shows, one "key value" a line:
        rows_colored N     rows of the graph (below the marker row, above the
                           middle) that hold at least
                           20 pixels of a saturated colour (task bars, CPU plots)
        bands N            runs of such rows (one per drawn CPU or task plot)
        colors N           distinct saturated colours there (one per task), and
        color_list C,...   those drawn over at least 50 pixels, as RRGGBB
        table_rows N       text lines of the lower half (the table)
        colored_hash H     a hash of the saturated pixels of the graph area
        marker_a X         the column of marker A's line (dark green, 008000)
                           across the graph, -1 when none is drawn
        marker_b X         the same for marker B (dark cyan, 008080)
        lost_marks X:Y0-Y1,...  KernelShark's lost-events marks (the
                           missed_events plugin's blue 0000ff lines, 15
                           pixels or taller): column and rows, or -
        band_list Y0-Y1:X,...   each band's rows and first column (where
                           its plot starts: its first event), or -
        table_lines N      text lines of the whole table, from under its
                           header (found at its right edge) down
        selected_row Y     the top of the table row drawn in marker A's
                           colour (the selected row) in the window, -1
                           when none
        table_hash H       a hash of the table's rows (scroll bars left out)
        marks_hash H       a hash of the marker row of the tool bar (the
                           times of markers A and B and their delta)
        axis_hash H        a hash of the time axis' labels above the plots
                           (the visible range)
  ks-shot.py close WIN
      ask window WIN to close, as a window manager's close button does
      (WM_DELETE_WINDOW)
"""
import hashlib
import struct
import sys

from PIL import Image


def load(path):
    data = open(path, 'rb').read()
    hdr = struct.unpack('>25I', data[:100])
    header_size, fmt = hdr[0], hdr[2]
    width, height = hdr[4], hdr[5]
    byte_order, bpp, bpl, ncolors = hdr[7], hdr[11], hdr[12], hdr[19]
    if fmt != 2 or bpp not in (24, 32):
        sys.exit('ks-shot: %s: only 24- and 32-bit ZPixmap xwd files are handled' % path)
    off = header_size + ncolors * 12
    raw = data[off:off + bpl * height]
    # Xvfb's depth 24: 3 bytes a pixel, lines padded to bytes_per_line;
    # pixels are 0xRRGGBB, least significant byte first when byte_order is 0
    if bpp == 24:
        mode = 'BGR' if byte_order == 0 else 'RGB'
    else:
        mode = 'BGRX' if byte_order == 0 else 'XRGB'
    return Image.frombytes('RGB', (width, height), raw, 'raw', mode, bpl)


def saturated(p):
    r, g, b = p
    return max(r, g, b) - min(r, g, b) > 60


def check(img, x, y, w, h):
    img = img.crop((x, y, x + w, y + h))
    px = img.load()
    # KernelShark's window: menu bar, pointer and marker rows (about 85
    # pixels whatever the size), the graph (CPU and task plots) down to the
    # splitter in the middle, the table below it
    graph = (0, 88, w, int(h * 0.55))
    table = (0, int(h * 0.55), w, h)
    rows = bands = 0
    colors = {}
    digest = hashlib.sha1()
    in_band = False
    starts = []
    spans = []
    lost_blue = (0, 0, 255)
    for yy in range(graph[1], graph[3]):
        n = 0
        first = -1
        for xx in range(graph[0], graph[2]):
            p = px[xx, yy]
            if saturated(p):
                n += 1
                colors[p] = colors.get(p, 0) + 1
                digest.update(bytes((xx & 0xff, yy & 0xff)) + bytes(p))
                if first < 0 and p != lost_blue:
                    first = xx
        if n >= 20:
            rows += 1
            if not in_band:
                bands += 1
                starts.append(first)
                spans.append([yy, yy])
            elif first >= 0 and (starts[-1] < 0 or first < starts[-1]):
                starts[-1] = first
            spans[-1][1] = yy
        in_band = n >= 20
    # table lines: runs of pixel rows holding more dark (text) pixels than
    # the emptiest row (grid lines and borders are in every row)
    dark = [sum(1 for xx in range(0, w, 2) if sum(px[xx, yy]) < 200)
            for yy in range(table[1], table[3])]
    base = min(dark) if dark else 0
    lines = 0
    inside = False
    for d in dark:
        if d >= base + 6 and not inside:
            lines += 1
        inside = d >= base + 6
    print('rows_colored', rows)
    print('bands', bands)
    print('colors', len(colors))
    print('color_list', ','.join(sorted('%02x%02x%02x' % c for c, n in colors.items()
                                        if n >= 50)))
    print('table_rows', lines)
    print('colored_hash', digest.hexdigest()[:16])
    # marker A: KernelShark draws it as a vertical line of Qt::darkGreen
    # through every plot (40 pixels or more), and colours the selected table row with it
    mark = (0, 128, 0)
    tall = 40
    marker = -1
    marker_b = -1
    lost = []
    for xx in range(graph[0], graph[2]):
        col = [px[xx, yy] for yy in range(graph[1], graph[3])]
        if marker < 0 and col.count(mark) >= tall:
            marker = xx
        if marker_b < 0 and col.count((0, 128, 128)) >= tall:
            marker_b = xx
        # the mark's line is a plot high (about 25 pixels), its flag 6 wide
        run = 0
        for i, p in enumerate(col + [None]):
            if p == lost_blue:
                run += 1
                continue
            if run >= 15:
                lost.append('%d:%d-%d' % (xx, graph[1] + i - run, graph[1] + i - 1))
            run = 0
    # the selected row: a sixteenth of the window wide or more in that
    # colour (the cell under the pointer is drawn a shade lighter, (0, 132,
    # 0), and its top line not at all: the row's top is found the same way
    # with the pointer on it or not)
    selected = -1
    for yy in range(graph[1], h):
        if sum(1 for xx in range(0, w, 4) if px[xx, yy] == mark) >= w // 16:
            selected = yy
            break
    print('marker_a', marker)
    print('marker_b', marker_b)
    print('lost_marks', ','.join(map(str, lost)) or '-')
    print('band_list', ','.join('%d-%d:%d' % (y0, y1, x)
                                for (y0, y1), x in zip(spans, starts)) or '-')
    print('selected_row', selected)
    # the table's header: the first pixel up from the bottom right corner
    # (right of every column, left of the scroll bar) that is not white
    top = h - 40
    while top > graph[3] // 2 and min(px[w - 40, top]) >= 250:
        top -= 1
    dark = [sum(1 for xx in range(0, w - 30, 2) if sum(px[xx, yy]) < 200)
            for yy in range(top + 2, h - 30)]
    n = 0
    inside = False
    for d in dark:
        if d >= 6 and not inside:
            n += 1
        inside = d >= 6
    print('table_lines', n)
    # without the scroll bars, whose handles shrink as rows are added
    rows_area = (table[0], table[1], table[2] - 30, table[3] - 30)
    print('table_hash', hashlib.sha1(img.crop(rows_area).tobytes()).hexdigest()[:16])
    print('marks_hash', hashlib.sha1(img.crop((0, 60, w, 84)).tobytes()).hexdigest()[:16])
    print('axis_hash', hashlib.sha1(img.crop((0, 95, w, 122)).tobytes()).hexdigest()[:16])


def close(win):
    """Send WM_DELETE_WINDOW to window WIN (libX11 through ctypes)."""
    import ctypes
    import ctypes.util

    class ClientMessage(ctypes.Structure):
        _fields_ = [('type', ctypes.c_int), ('serial', ctypes.c_ulong),
                    ('send_event', ctypes.c_int), ('display', ctypes.c_void_p),
                    ('window', ctypes.c_ulong), ('message_type', ctypes.c_ulong),
                    ('format', ctypes.c_int), ('data', ctypes.c_long * 5)]

    class XEvent(ctypes.Union):
        _fields_ = [('xclient', ClientMessage), ('pad', ctypes.c_long * 24)]

    x = ctypes.CDLL(ctypes.util.find_library('X11'))
    x.XOpenDisplay.restype = ctypes.c_void_p
    x.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x.XInternAtom.restype = ctypes.c_ulong
    x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long,
                             ctypes.POINTER(XEvent)]
    x.XFlush.argtypes = [ctypes.c_void_p]
    x.XCloseDisplay.argtypes = [ctypes.c_void_p]
    dpy = x.XOpenDisplay(None)
    if not dpy:
        sys.exit('ks-shot: cannot open the display')
    ev = XEvent()
    ev.xclient.type = 33    # ClientMessage
    ev.xclient.window = win
    ev.xclient.message_type = x.XInternAtom(dpy, b'WM_PROTOCOLS', 0)
    ev.xclient.format = 32
    ev.xclient.data[0] = x.XInternAtom(dpy, b'WM_DELETE_WINDOW', 0)
    ev.xclient.data[1] = 0  # CurrentTime
    if not x.XSendEvent(dpy, win, 0, 0, ctypes.byref(ev)):
        sys.exit('ks-shot: XSendEvent failed')
    x.XFlush(dpy)
    x.XCloseDisplay(dpy)


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == 'png':
        img = load(sys.argv[2])
        if len(sys.argv) == 8:
            x, y, w, h = map(int, sys.argv[4:8])
            img = img.crop((x, y, x + w, y + h))
        img.save(sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == 'close':
        close(int(sys.argv[2], 0))
    elif len(sys.argv) == 7 and sys.argv[1] == 'check':
        check(load(sys.argv[2]), *map(int, sys.argv[3:7]))
    else:
        sys.exit(__doc__)


main()
