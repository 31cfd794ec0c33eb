// SPDX-License-Identifier: GPL-2.0-only
/*
 * KernelShark menu part of tracemap's plugin: Tools -> "tracemap: refresh
 * now", "tracemap: follow", "tracemap: tail mode", "tracemap: stop following".
 *
 * A refresh takes a new copy of the live buffer in a worker thread (the
 * input part's tmks_image_take()); the GUI thread then swaps the new data
 * into the stream KernelShark already shows, under the same stream id,
 * and reloads the entries (KsDataStore::reload()). The stream keeps its
 * filters and plugins, the graph its CPU and task plots; markers, the
 * table's selection and top row are put back on the same events when they
 * are still in the buffer. Nothing is reset or drawn empty in between, and
 * no dialog or progress bar is shown, so menus stay open while following.
 * In tail mode the visible range keeps its width and ends at the newest
 * event; a zoom or scroll by the user holds the view until tail mode is
 * chosen again.
 *
 * KernelShark's GUI headers are not installed: the members used are
 * declared below (KernelShark 2.2.1) and resolved when the plugin loads.
 * On another KernelShark the input part works and the menu is left out.
 */
#include <algorithm>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include <QAbstractProxyModel>
#include <QAbstractTableModel>
#include <QAction>
#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QEvent>
#include <QHeaderView>
#include <QKeyEvent>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QPointer>
#include <QScrollBar>
#include <QStatusBar>
#include <QString>
#include <QTableView>
#include <QTimer>

#include <libkshark.h>
#include <libkshark-model.h>
#include <libkshark-plugin.h>
#include <libkshark-tepdata.h>

#include "tracemap-ks.h"

namespace {

/*
 * KernelShark 2.2.1's GUI (libkshark-gui.so.2.2.1): exported non-virtual
 * members, called with the object as first argument (Itanium C++ ABI), and
 * the layouts of the three classes whose inline getters the plugin needs.
 */
#define KS_GUI_VERSION		"2.2.1"
#define KS_GUI_LIBRARY		"libkshark-gui.so." KS_GUI_VERSION

enum { MARK_A = 0, MARK_B = 1 };	/* enum class DualMarkerState */

struct ks_gui {
	void (*reload)(QObject *data);				/* KsDataStore::reload() */
	void (*model_update)(void *model, QObject *data);	/* KsGraphModel::update(KsDataStore *) */
	void *(*get_marker)(QWidget *msm, int state);		/* KsDualMarkerSM::getMarker() */
	void (*update_markers)(QWidget *msm, const QObject *data, QWidget *glw);
	bool (*mark_set)(void *mark, const QObject *data, kshark_trace_histo *histo,
			 ssize_t pos, int sd);			/* KsGraphMark::set() */
	void (*mark_reset)(void *mark);				/* KsGraphMark::reset() */
	void (*mark_switch)(QWidget *viewer);			/* KsTraceViewer::markSwitch() */
	const void *graph_model_vtable;				/* vtable for KsGraphModel */
};

const struct {
	const char *name;
	size_t off;
} ks_gui_symbols[] = {
	{ "_ZN11KsDataStore6reloadEv", offsetof(ks_gui, reload) },
	{ "_ZN12KsGraphModel6updateEP11KsDataStore", offsetof(ks_gui, model_update) },
	{ "_ZN14KsDualMarkerSM9getMarkerE15DualMarkerState", offsetof(ks_gui, get_marker) },
	{ "_ZN14KsDualMarkerSM13updateMarkersERK11KsDataStoreP10KsGLWidget",
	  offsetof(ks_gui, update_markers) },
	{ "_ZN11KsGraphMark3setERK11KsDataStoreP18kshark_trace_histoli",
	  offsetof(ks_gui, mark_set) },
	{ "_ZN11KsGraphMark5resetEv", offsetof(ks_gui, mark_reset) },
	{ "_ZN13KsTraceViewer10markSwitchEv", offsetof(ks_gui, mark_switch) },
	{ "_ZTV12KsGraphModel", offsetof(ks_gui, graph_model_vtable) },
};

/* KsDataStore: QObject, then kshark_entry **_rows; ssize_t _dataSize. */
struct data_store_layout {
	char qobject[sizeof(QObject)];
	kshark_entry **rows;
	ssize_t size;
};

/* KsGraphMark: QObject, then bool _isSet; int _bin; int _sd; ssize_t _pos; int64_t _ts. */
struct graph_mark_layout {
	char qobject[sizeof(QObject)];
	bool is_set;
	int bin;
	int sd;
	ssize_t pos;
	int64_t ts;
};

/* KsGraphModel: QAbstractTableModel, then kshark_trace_histo _histo. */
struct graph_model_layout {
	char base[sizeof(QAbstractTableModel)];
	kshark_trace_histo histo;
};

/* An entry as the user sees it, found again in a new copy of the buffer. */
struct entry_id {
	bool valid = false;
	int64_t ts;
	int16_t cpu;
	int32_t pid;
	int16_t event_id;
};

void on_title_change();

/* Our QObjects' parent and the event filter on the main window. */
class Owner : public QObject {
public:
	bool eventFilter(QObject *obj, QEvent *ev) override;
};

struct Follow {
	QMainWindow *ks = nullptr;
	Owner *owner = nullptr;		/* every Qt object and connection of ours */
	QTimer *timer = nullptr;
	QAction *tail_action = nullptr;
	ks_gui gui = {};
	bool gui_ok = false;
	QString gui_why;		/* why the menu is left out */

	/* the widgets of the main window, found when first needed */
	QObject *data = nullptr;	/* KsDataStore */
	QWidget *glw = nullptr;		/* KsGLWidget */
	QWidget *viewer = nullptr;	/* KsTraceViewer */
	QWidget *msm = nullptr;		/* KsDualMarkerSM */
	QTableView *table = nullptr;
	QAbstractItemModel *model = nullptr; /* KsGraphModel in KsGLWidget */
	QList<QObject *> nav;		/* the graph's <, +, -, > buttons */

	/* a release of a graph navigation button or key still to be repeated */
	QPointer<QObject> nav_stop;
	const char *nav_stop_signal = nullptr;

	bool live = false;		/* the window shows tmks_live_source() */
	int period_ms = 0;		/* 0: not following */
	bool tail = true;
	int64_t tail_min = 0, tail_max = 0;	/* the range tail mode set last */
	bool applying = false;		/* our own changes of the graph's range */
	unsigned long refreshes = 0;
	QString when;			/* time of the last copy */
	QString stopped;		/* why following stopped, empty when it did not */
	bool started = false;		/* following was started once on open */
	bool quitting = false;		/* KernelShark is about to quit */

	std::thread worker;
	bool taking = false;		/* a copy is being taken */
	bool stats = false;		/* TRACEMAP_KS_STATS: the times of each refresh on stderr */
	QElapsedTimer took;		/* since the copy was asked for */
	bool refresh_queued = false;	/* "refresh now" while a copy was taken */

	/*
	 * Runs when KernelShark unloads the plugin (dlclose in ~KsMainWindow(),
	 * before the window's children are destroyed): our objects, connections
	 * and the worker must be gone by then, or destroying them later runs
	 * code that is no longer mapped. The worker was joined when the
	 * application was about to quit (finish_worker()): joining it here,
	 * under the loader's lock, would wait for ever on a worker that is
	 * loading libtraceevent's plugins (dlopen) for a new copy.
	 */
	~Follow()
	{
		if (worker.joinable())
			worker.join();
		delete owner;
	}
};

Follow follow;

void update_title();
void on_range_change();

/*
 * KernelShark's graph zooms or scrolls while a navigation button or key is
 * held: pressed starts a loop that stops on released. When both arrive
 * together (a quick click while a refresh kept the GUI busy), the release
 * is handled inside the press's "work in progress" update, before the loop
 * starts, and the loop runs until the next click. Remember the release
 * here; on_range_change() repeats it once the loop moved the range.
 */
void watch_nav(QObject *obj, QEvent *ev)
{
	auto *key = static_cast<QKeyEvent *>(ev);

	switch (ev->type()) {
	case QEvent::MouseButtonPress:
	case QEvent::MouseButtonDblClick:
		follow.nav_stop = nullptr;
		break;
	case QEvent::MouseButtonRelease:
		if (obj != follow.glw) {
			follow.nav_stop = obj;
			follow.nav_stop_signal = "released";
		}
		break;
	case QEvent::KeyPress:
	case QEvent::KeyRelease:
		if (obj != follow.glw || key->isAutoRepeat())
			break;
		if (key->key() != Qt::Key_Plus && key->key() != Qt::Key_Minus &&
		    key->key() != Qt::Key_Left && key->key() != Qt::Key_Right)
			break;
		follow.nav_stop = ev->type() == QEvent::KeyRelease ? obj : nullptr;
		follow.nav_stop_signal = "stopUpdating";
		break;
	default:
		break;
	}
}

bool Owner::eventFilter(QObject *obj, QEvent *ev)
{
	if (obj == follow.ks && ev->type() == QEvent::WindowTitleChange)
		QMetaObject::invokeMethod(this, on_title_change, Qt::QueuedConnection);
	else if (obj == follow.glw || follow.nav.contains(obj))
		watch_nav(obj, ev);
	return false;
}

/*
 * Resolve ks_gui_symbols in the KernelShark that loaded us and check that it
 * is the one they were declared for. Returns false with follow.gui_why set.
 */
bool resolve_gui()
{
	char real[PATH_MAX];
	Dl_info info;
	void *sym;

	for (const auto &s : ks_gui_symbols) {
		sym = dlsym(RTLD_DEFAULT, s.name);
		if (!sym) {
			follow.gui_why = QString("%1 is missing").arg(s.name);
			return false;
		}
		memcpy(reinterpret_cast<char *>(&follow.gui) + s.off, &sym, sizeof(sym));
	}
	if (!dladdr(reinterpret_cast<void *>(follow.gui.reload), &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, real)) {
		follow.gui_why = "the GUI library cannot be found";
		return false;
	}
	const char *base = strrchr(real, '/');

	base = base ? base + 1 : real;
	if (strcmp(base, KS_GUI_LIBRARY)) {
		follow.gui_why = QString("it runs with %1, not %2").arg(base).arg(KS_GUI_LIBRARY);
		return false;
	}
	return true;
}

QWidget *child_widget(QObject *parent, const char *cls)
{
	for (QWidget *w : parent->findChildren<QWidget *>())
		if (!strcmp(w->metaObject()->className(), cls))
			return w;
	return nullptr;
}

/*
 * KsGLWidget holds its KsGraphModel by value and does not parent it: find it
 * inside the widget by its vtable pointer.
 */
QAbstractItemModel *find_graph_model(QWidget *glw)
{
	const void *vptr = static_cast<const char *>(follow.gui.graph_model_vtable) +
			   2 * sizeof(void *);	/* past offset-to-top and typeinfo */
	const char *p = reinterpret_cast<const char *>(glw);
	size_t off;

	for (off = sizeof(QObject); off < 4096; off += sizeof(void *)) {
		const void *v;

		memcpy(&v, p + off, sizeof(v));
		if (v == vptr)
			return reinterpret_cast<QAbstractItemModel *>(const_cast<char *>(p + off));
	}
	return nullptr;
}

bool find_widgets()
{
	if (follow.model)
		return true;
	for (QObject *o : follow.ks->findChildren<QObject *>())
		if (!strcmp(o->metaObject()->className(), "KsDataStore"))
			follow.data = o;
	follow.glw = child_widget(follow.ks, "KsGLWidget");
	follow.viewer = child_widget(follow.ks, "KsTraceViewer");
	follow.msm = child_widget(follow.ks, "KsDualMarkerSM");
	if (follow.viewer)
		follow.table = follow.viewer->findChild<QTableView *>();
	if (!follow.data || !follow.glw || !follow.viewer || !follow.msm || !follow.table)
		return false;
	follow.model = find_graph_model(follow.glw);
	if (!follow.model)
		return false;
	if (QWidget *graph = child_widget(follow.ks, "KsTraceGraph"))
		for (QPushButton *b : graph->findChildren<QPushButton *>())
			if (QStringList({ "<", "+", "-", ">" }).contains(b->text()))
				follow.nav.append(b);
	for (QObject *o : follow.nav)
		o->installEventFilter(follow.owner);
	follow.glw->installEventFilter(follow.owner);
	QObject::connect(follow.model, &QAbstractItemModel::modelReset, follow.owner,
			 on_range_change);
	return true;
}

data_store_layout *store()
{
	return reinterpret_cast<data_store_layout *>(follow.data);
}

kshark_trace_histo *histo()
{
	return &reinterpret_cast<graph_model_layout *>(follow.model)->histo;
}

graph_mark_layout *marker(int state)
{
	return static_cast<graph_mark_layout *>(follow.gui.get_marker(follow.msm, state));
}

entry_id id_of(ssize_t row)
{
	entry_id id;

	if (row < 0 || row >= store()->size)
		return id;
	const kshark_entry *e = store()->rows[row];

	id.valid = true;
	id.ts = e->ts;
	id.cpu = e->cpu;
	id.pid = e->pid;
	id.event_id = e->event_id;
	return id;
}

/* The row of @id in the data loaded now, or -1 when it left the buffer. */
ssize_t row_of(const entry_id &id)
{
	kshark_entry **rows = store()->rows;
	ssize_t n = store()->size, r;

	if (!id.valid || n <= 0)
		return -1;
	r = kshark_find_entry_by_time(id.ts, rows, 0, n - 1);
	for (; r >= 0 && r < n && rows[r]->ts == id.ts; r++)
		if (rows[r]->cpu == id.cpu && rows[r]->pid == id.pid &&
		    rows[r]->event_id == id.event_id)
			return r;
	return -1;
}

/* Data row <-> row of the table (which may be filtered). */
int table_row(ssize_t row)
{
	auto *proxy = qobject_cast<QAbstractProxyModel *>(follow.table->model());

	if (!proxy || row < 0)
		return -1;
	return proxy->mapFromSource(proxy->sourceModel()->index(row, 0)).row();
}

ssize_t data_row(int trow)
{
	auto *proxy = qobject_cast<QAbstractProxyModel *>(follow.table->model());

	if (!proxy || trow < 0)
		return -1;
	return proxy->mapToSource(proxy->index(trow, 0)).row();
}

/*
 * The row numbers and time stamps grow longer than those KernelShark sized
 * their columns by: widen them to the last row's.
 */
void fit_columns()
{
	QAbstractItemModel *m = follow.table->model();
	int rows = m->rowCount();

	for (int col = 0; rows && col < m->columnCount(); col++) {
		QString head = m->headerData(col, Qt::Horizontal).toString();

		if (head != "#" && head != "Time Stamp")
			continue;
		QString widest = m->data(m->index(rows - 1, col)).toString();
		int need = follow.table->fontMetrics().horizontalAdvance(widest + "00");

		if (follow.table->columnWidth(col) < need)
			follow.table->setColumnWidth(col, need);
	}
}

QString base_title()
{
	QString title = follow.ks->windowTitle();
	int cut = title.indexOf(" - tracemap: ");

	if (cut >= 0)
		title.truncate(cut);
	return title;
}

void update_title()
{
	struct tmks_counts c;
	QString s;

	if (!follow.live)
		return;
	tmks_live_counts(&c);
	s = QString("%1 events").arg(c.events);
	if (c.lost || c.lost_gaps)
		s += QString(" (%1 lost%2)").arg(c.lost)
			.arg(c.lost_gaps ? QString(" + %1 gaps").arg(c.lost_gaps) : QString());
	if (follow.refreshes)
		s += QString(", refresh %1 at %2").arg(follow.refreshes).arg(follow.when);
	else
		s += QString(", opened at %1").arg(follow.when);
	if (!follow.stopped.isEmpty())
		s += ", stopped following: " + follow.stopped;
	else if (follow.period_ms > 0)
		s += QString(", following every %1 ms, %2").arg(follow.period_ms)
			.arg(follow.tail ? "tail mode" : "view held (Tools: tracemap: tail mode)");
	else
		s += ", not following";
	follow.ks->setWindowTitle(base_title() + " - tracemap: " + s);
}

void set_tail(bool on)
{
	follow.tail = on;
	if (follow.tail_action) {
		QSignalBlocker block(follow.tail_action);

		follow.tail_action->setChecked(on);
	}
	update_title();
}

void remember_range()
{
	follow.tail_min = histo()->min;
	follow.tail_max = histo()->max;
}

/* The graph's range changed: by the user (zoom, scroll, a jump) unless by us. */
void on_range_change()
{
	kshark_trace_histo *h = histo();
	int64_t slack = 2 * h->bin_size;

	if (follow.nav_stop) {
		auto *b = qobject_cast<QPushButton *>(follow.nav_stop.data());

		if (!b || !b->isDown())
			QMetaObject::invokeMethod(follow.nav_stop, follow.nav_stop_signal);
		follow.nav_stop = nullptr;
	}
	if (follow.applying || !follow.live || !h->n_bins)
		return;
	/* a resize of the window rebins the same range: that is no move */
	if (follow.tail && (llabs(h->min - follow.tail_min) > slack ||
			    llabs(h->max - follow.tail_max) > slack)) {
		set_tail(false);
		return;
	}
	remember_range();
}

/* KernelShark set its title: say what the view holds, or forget a view replaced. */
void on_title_change()
{
	const char *src = tmks_live_source();
	QString title = follow.ks->windowTitle();

	if (title.contains(" - tracemap: "))
		return;
	bool live = src && title == QString("Kernel Shark (%1)").arg(src);

	if (!live) {
		if (title != "Kernel Shark" && follow.live) {
			/* the user opened another file */
			follow.live = false;
			follow.period_ms = 0;
			follow.timer->stop();
		}
		return;
	}
	if (!follow.live) {
		follow.live = true;
		follow.refreshes = 0;
		follow.stopped.clear();
		follow.when = QDateTime::currentDateTime().toString("HH:mm:ss.zzz");
		follow.tail = true;
	}
	if (follow.gui_ok && find_widgets()) {
		remember_range();
		fit_columns();
	}
	update_title();
}

void stop_following(const QString &why)
{
	follow.period_ms = 0;
	follow.timer->stop();
	follow.stopped = why;
	update_title();
	if (!why.isEmpty())
		follow.ks->statusBar()->showMessage("tracemap: stopped following: " + why);
}

int live_stream(kshark_context *ctx, const char *src)
{
	int *ids = kshark_all_streams(ctx), sd = -1;

	for (int i = 0; ids && i < ctx->n_streams; i++) {
		kshark_data_stream *s = kshark_get_data_stream(ctx, ids[i]);

		if (s && s->file && !strcmp(s->file, src) && kshark_is_tep(s)) {
			sd = ids[i];
			break;
		}
	}
	free(ids);
	return sd;
}

/*
 * The range of tail mode: @width wide, the newest event @last one bin
 * inside its right edge (KernelShark jumps to an event on the edge when
 * its row is selected, and that would leave tail mode).
 */
void tail_range(int bins, int64_t width, int64_t last)
{
	int64_t margin = width / bins + 1;

	ksmodel_set_bining(histo(), bins, last + margin - width, last + margin);
}

/*
 * The width of a tail_range() of @bins bins that holds @first to @last:
 * tail_range() puts @last one bin inside the right edge, and KernelShark
 * rounds the bins down to whole ns (bins of 2 ns at least).
 */
int64_t whole_width(int bins, int64_t first, int64_t last)
{
	return (last - first + 2) * bins / (bins > 1 ? bins - 1 : 1) + 2 * bins;
}

template <typename T> void swap_field(T &a, T &b)
{
	T t = a;

	a = b;
	b = t;
}

/*
 * KernelShark's trace.dat reader on image @fd, in a stream of our own that
 * KernelShark does not know (in the worker thread: parsing the image's
 * formats and symbols is the slow part of opening it). NULL on failure.
 */
kshark_data_stream *open_image(int fd)
{
	auto *p = static_cast<kshark_data_stream *>(calloc(1, sizeof(kshark_data_stream)));
	char path[64];

	if (!p)
		return nullptr;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	p->file = strdup(path);
	if (!p->file || kshark_tep_init_input(p) < 0) {
		free(p->file);
		free(p->name);
		free(p);
		return nullptr;
	}
	tmks_functions_attach(kshark_get_tep(p));
	return p;
}

void close_image(kshark_data_stream *p)
{
	if (!p)
		return;
	kshark_tep_close_interface(p);
	free(p->interface);
	free(p->file);
	free(p->name);
	free(p);
}

/*
 * The TEP advanced filter of stream @s as "system/event:condition" texts,
 * the form KernelShark's dialog and session files use: the filter itself
 * points into the event formats of the reader it was made for.
 */
std::vector<std::string> adv_filters(kshark_data_stream *s)
{
	std::vector<std::string> v;
	int *ids;

	if (!kshark_tep_filter_is_set(s) || !(ids = kshark_get_all_event_ids(s)))
		return v;
	for (int i = 0; i < s->n_events; i++) {
		char *cond = kshark_tep_filter_make_string(s, ids[i]);
		char *name;

		if (!cond)
			continue;
		name = kshark_event_from_id(s->stream_id, ids[i]);
		if (name)
			v.push_back(std::string(name) + ":" + cond);
		free(name);
		free(cond);
	}
	free(ids);
	return v;
}

/*
 * Move the data of @img's stream into stream @cur, whose filters, plugins,
 * name and id stay; @img's stream leaves with the old data and is closed.
 * Returns the advanced filters that could not be kept (their event is not
 * in the new copy), as text.
 */
QStringList swap_in(kshark_data_stream *cur, kshark_data_stream *img)
{
	std::vector<std::string> adv = adv_filters(cur);
	QStringList lost;

	/* plugins hold pointers into the old data's event formats */
	kshark_handle_all_dpis(cur, KSHARK_PLUGIN_CLOSE);
	swap_field(cur->interface, img->interface);
	swap_field(cur->n_cpus, img->n_cpus);
	swap_field(cur->n_events, img->n_events);
	swap_field(cur->idle_pid, img->idle_pid);
	/* what the entries of the old data taught */
	kshark_hash_id_clear(cur->tasks);
	kshark_hash_id_clear(cur->idle_cpus);
	for (const std::string &f : adv)
		if (kshark_tep_add_filter_str(cur, f.c_str()))
			lost << QString::fromStdString(f);
	kshark_handle_all_dpis(cur, KSHARK_PLUGIN_INIT);
	close_image(img);
	return lost;
}

/* KernelShark is about to quit: no more copies, the one being taken ends. */
void finish_worker()
{
	follow.quitting = true;
	follow.period_ms = 0;
	follow.timer->stop();
	if (follow.worker.joinable())
		follow.worker.join();
}

/* A refresh is done: the title says when, and the next one is due. */
void finish_refresh()
{
	follow.when = QDateTime::currentDateTime().toString("HH:mm:ss.zzz");
	update_title();
	if (follow.refresh_queued) {
		follow.refresh_queued = false;
		QTimer::singleShot(0, follow.owner, [] () { follow.timer->start(0); });
	}
	if (follow.period_ms > 0)
		follow.timer->start(follow.period_ms);
}

/* A copy was taken (in the GUI thread): show it without losing the view. */
void apply(tmks_image img, kshark_data_stream *opened, int err)
{
	const char *src = tmks_live_source();
	kshark_context *ctx = nullptr;
	entry_id marks[2], top, sel;
	int sd;

	if (follow.worker.joinable())
		follow.worker.join();
	follow.taking = false;
	if (follow.quitting || !follow.live || !src || strcmp(src, img.path)) {
		close_image(opened);
		return;		/* another file is shown now; the image file is reused */
	}
	if (!err && !opened && !img.same)
		err = -EFAULT;
	if (err) {
		struct stat st;

		if (stat(img.path, &st) || err == -ENOENT)
			stop_following(QString("%1 is gone; the last copy stays shown")
				       .arg(!*img.name ? QString(img.path) :
					    !strcmp(img.name, "top") ? QString("the top-level buffer") :
					    QString("instance %1").arg(img.name)));
		else
			stop_following(QString("cannot copy the buffer: %1").arg(strerror(-err)));
		return;
	}
	if (!img.counts.events) {
		/* KernelShark's graph cannot show no data: keep the last copy */
		close_image(opened);
		follow.ks->statusBar()->showMessage("tracemap: the buffer is empty now; the last copy"
						    " stays shown", 5000);
		if (follow.period_ms > 0)
			follow.timer->start(follow.period_ms);
		return;
	}
	if (img.same) {
		/* the copy shown holds all of it: nothing to load, the view stays as it is */
		follow.refreshes++;
		if (follow.stats)
			fprintf(stderr, "tracemap: refresh %lu: %llu events, copy %.1f ms, asked %.1f"
				" ms ago; unchanged: KernelShark keeps the copy shown\n",
				follow.refreshes, img.counts.events, img.copy_ns / 1e6,
				follow.took.nsecsElapsed() / 1e6);
		finish_refresh();
		return;
	}
	if (!kshark_instance(&ctx) || (sd = live_stream(ctx, src)) < 0 || !find_widgets() ||
	    !histo()->n_bins) {
		close_image(opened);
		stop_following("the live stream is no longer shown");
		return;
	}

	qint64 copy_ns = follow.took.nsecsElapsed();
	QElapsedTimer t;

	t.start();
	follow.applying = true;
	/* what the user set up, by event: rows move as the buffer wraps */
	for (int m : { MARK_A, MARK_B })
		if (marker(m)->is_set)
			marks[m] = id_of(marker(m)->pos);
	QModelIndex top_index = follow.table->indexAt(QPoint(0, 0));
	int top_y = follow.table->visualRect(top_index).top();	/* <= 0: partly hidden */

	top = id_of(data_row(top_index.row()));
	sel = id_of(data_row(follow.table->currentIndex().row()));
	if (!follow.table->selectionModel()->hasSelection())
		sel.valid = false;
	int64_t width = histo()->max - histo()->min;
	int bins = histo()->n_bins;
	struct tmks_counts shown;

	/*
	 * A view of the whole copy (as KernelShark opens one, or zoomed all the
	 * way out) widens with the data while the buffer fills: its width was
	 * the data's, not a choice to keep (a copy of one event opens 1 us
	 * wide). It never narrows: a range that shrank when the buffer wraps
	 * would move the markers right.
	 */
	tmks_live_counts(&shown);
	bool whole = histo()->min <= (int64_t)shown.first_ts && histo()->max >= (int64_t)shown.last_ts;

	/*
	 * KernelShark's graph refills its range from the new data while
	 * reloading (and asserts when the range lies before all of it): move
	 * it now, by the copy's newest event.
	 */
	int64_t nfirst = img.counts.first_ts, nlast = img.counts.last_ts;

	if (follow.tail || histo()->max < nfirst || histo()->min > nlast)
		tail_range(bins, whole ? std::max(width, whole_width(bins, nfirst, nlast)) : width,
			   nlast);

	/* KernelShark's widgets look at the markers' rows while reloading */
	for (int m : { MARK_A, MARK_B })
		follow.gui.mark_reset(marker(m));
	qint64 save_ns = t.nsecsElapsed();

	QStringList lost_filters = swap_in(kshark_get_data_stream(ctx, sd), opened);
	tmks_image_shown(&img);

	follow.gui.reload(follow.data);

	ssize_t n = store()->size;
	int64_t first = store()->rows[0]->ts, last = store()->rows[n - 1]->ts;

	if (whole)
		width = std::max(width, whole_width(bins, first, last));
	/* a held range the buffer left behind shows the end, as tail mode would */
	if (follow.tail || histo()->max < first || histo()->min > last)
		tail_range(bins, width, last);
	follow.gui.model_update(follow.model, follow.data);
	remember_range();
	qint64 load_ns = t.nsecsElapsed();

	for (int m : { MARK_A, MARK_B }) {
		ssize_t r = row_of(marks[m]);

		if (r >= 0)
			follow.gui.mark_set(marker(m), follow.data, histo(), r,
					    store()->rows[r]->stream_id);
	}
	follow.gui.update_markers(follow.msm, follow.data, follow.glw);
	follow.gui.mark_switch(follow.viewer);
	ssize_t r = row_of(sel);
	if (r >= 0 && table_row(r) >= 0) {
		follow.table->setAutoScroll(false);
		follow.table->selectRow(table_row(r));
		follow.table->setAutoScroll(true);
	}
	r = row_of(top);
	if (r >= 0 && table_row(r) >= 0) {
		QModelIndex i = follow.table->model()->index(table_row(r), 0);
		QScrollBar *sb = follow.table->verticalScrollBar();

		follow.table->scrollTo(i, QAbstractItemView::PositionAtTop);
		/* scrolled by pixels: the same part of the row hidden as before */
		if (follow.table->verticalScrollMode() == QAbstractItemView::ScrollPerPixel)
			sb->setValue(sb->value() + follow.table->visualRect(i).top() - top_y);
	}
	fit_columns();
	if (follow.tail && (histo()->min != follow.tail_min || histo()->max != follow.tail_max)) {
		/* putting the selection back made KernelShark jump to it */
		tail_range(bins, width, last);
		follow.gui.model_update(follow.model, follow.data);
		follow.gui.update_markers(follow.msm, follow.data, follow.glw);
		remember_range();
	}
	follow.applying = false;

	follow.refreshes++;
	if (follow.stats) {
		/*
		 * The plugin: the copy (worker thread), saving and putting back the
		 * view. KernelShark: opening the image (worker thread), the swap
		 * and loading it.
		 */
		double view = (save_ns + t.nsecsElapsed() - load_ns) / 1e6;
		double plugin = img.copy_ns / 1e6 + view;
		double ks = (img.open_ns + load_ns - save_ns) / 1e6;
		/* KernelShark's rows of lost events: their count is in .offset, -1 unknown */
		long long missed = 0, lost = 0, unknown = 0;

		for (ssize_t i = 0; i < n; i++) {
			const kshark_entry *e = store()->rows[i];

			if (e->event_id != KS_EVENT_OVERFLOW)
				continue;
			missed++;
			if (e->offset > 0)
				lost += e->offset;
			else
				unknown++;
		}
		fprintf(stderr, "tracemap: refresh %lu: %llu events, copy %.1f ms, view %.1f ms,"
			" KernelShark open+load %.1f ms (open %.1f), asked %.1f ms ago;"
			" plugin %.1f ms = %.1f %%; %lld lost-event rows: %lld lost, %lld unknown\n",
			follow.refreshes, img.counts.events, img.copy_ns / 1e6, view, ks,
			img.open_ns / 1e6, (copy_ns + t.nsecsElapsed()) / 1e6, plugin,
			100 * plugin / (plugin + ks), missed, lost, unknown);
	}
	if (!lost_filters.isEmpty())
		follow.ks->statusBar()->showMessage("tracemap: the new copy lacks the event of the"
						    " advanced filter " + lost_filters.join("; ") +
						    ": it was dropped");
	finish_refresh();
}

/* Take a copy in the worker thread; apply() shows it. */
void refresh()
{
	const char *src = tmks_live_source();

	if (follow.quitting)
		return;
	if (follow.taking) {
		follow.refresh_queued = true;
		return;
	}
	if (!src || !follow.live) {
		follow.ks->statusBar()->showMessage("tracemap: no live buffer is shown (open an"
						    " instance directory or a .tracemap file)");
		follow.period_ms = 0;
		return;
	}
	follow.taking = true;
	follow.took.start();
	std::string path(src);
	follow.worker = std::thread([path] () {
		tmks_image img;
		QElapsedTimer c;

		c.start();
		int err = tmks_image_take(path.c_str(), &img);

		img.copy_ns = c.nsecsElapsed();
		kshark_data_stream *opened = err || img.same ? nullptr : open_image(img.fd);

		img.open_ns = c.nsecsElapsed() - img.copy_ns;
		snprintf(img.path, sizeof(img.path), "%s", path.c_str());
		QMetaObject::invokeMethod(follow.owner, [img, opened, err] () {
			apply(img, opened, err);
		}, Qt::QueuedConnection);
	});
}

void on_timer()
{
	if (follow.period_ms <= 0)
		return;
	if (!follow.live && tmks_live_source()) {
		/* KernelShark has not finished showing the path yet */
		follow.timer->start(follow.period_ms);
		return;
	}
	refresh();
}

/* refresh every @ms (default 1000), in tail mode, the first time at once when @now */
void start_following(int ms, bool now)
{
	follow.period_ms = ms > 0 ? ms : 1000;
	follow.stopped.clear();
	set_tail(true);
	if (follow.taking)
		return;		/* apply() starts the timer */
	follow.timer->start(now ? 0 : follow.period_ms);
}

QAction *add_action(QMenu *menu, const char *text, void (*fn)())
{
	QAction *a = new QAction(text, follow.owner);

	QObject::connect(a, &QAction::triggered, follow.owner, fn);
	menu->addAction(a);
	return a;
}

QMenu *tools_menu()
{
	for (QAction *a : follow.ks->menuBar()->actions())
		if (a->menu() && a->text().remove('&') == "Tools")
			return a->menu();
	return nullptr;
}

} /* namespace */

/*
 * KernelShark: called once with the main window when the plugin is loaded
 * (before the file on the command line is opened). Returns no dialog.
 */
extern "C" void *KSHARK_MENU_PLUGIN_INITIALIZER(void *gui_ptr)
{
	QMainWindow *ks = static_cast<QMainWindow *>(gui_ptr);
	QMenu *tools;

	if (!ks || follow.ks)
		return nullptr;
	follow.ks = ks;
	follow.stats = getenv("TRACEMAP_KS_STATS") != nullptr;
	follow.owner = new Owner;
	follow.timer = new QTimer(follow.owner);
	follow.timer->setSingleShot(true);
	QObject::connect(follow.timer, &QTimer::timeout, follow.owner, on_timer);
	ks->installEventFilter(follow.owner);
	QObject::connect(qApp, &QCoreApplication::aboutToQuit, follow.owner, finish_worker);

	follow.gui_ok = resolve_gui();
	tools = follow.gui_ok ? tools_menu() : nullptr;
	if (follow.gui_ok && !tools) {
		follow.gui_ok = false;
		follow.gui_why = "its main window has no Tools menu";
	}
	if (!follow.gui_ok) {
		QString msg = QString("tracemap: this KernelShark is not %1 (%2): live buffers"
				      " open, but refresh and follow are left out")
				      .arg(KS_GUI_VERSION).arg(follow.gui_why);

		fprintf(stderr, "%s\n", msg.toLocal8Bit().constData());
		ks->statusBar()->showMessage(msg);
		return nullptr;
	}
	tools->addSeparator()->setParent(follow.owner);
	add_action(tools, "tracemap: refresh now", [] () { refresh(); });
	add_action(tools, "tracemap: follow", [] () { start_following(tmks_follow_ms(), true); });
	/* a check box: in tail mode it holds the view, else it resumes tail mode */
	follow.tail_action = add_action(tools, "tracemap: tail mode", [] () {
		set_tail(!follow.tail);
		if (follow.tail && !follow.taking && follow.live)
			refresh();
	});
	follow.tail_action->setCheckable(true);
	follow.tail_action->setChecked(true);
	add_action(tools, "tracemap: stop following", [] () { stop_following("by the menu"); });
	return nullptr;
}

void tmks_opened(void)
{
	if (!follow.ks || !follow.gui_ok || follow.started || tmks_follow_ms() <= 0)
		return;
	follow.started = true;
	/* called in KernelShark's loading thread: start the timer in the GUI thread */
	QMetaObject::invokeMethod(follow.owner, [] () {
		if (follow.period_ms <= 0)
			start_following(tmks_follow_ms(), false);
	}, Qt::QueuedConnection);
}
