// SPDX-License-Identifier: GPL-2.0-only
/*
 * KernelShark menu part of tracemap's plugin: Tools -> "tracemap: refresh
 * now", "tracemap: follow", "tracemap: stop following".
 *
 * A refresh reopens the live buffer the input part opened last
 * (tmks_live_source()) through KsMainWindow::loadDataFile(), KernelShark's
 * own File -> Open path: the input part takes a fresh copy of the buffer,
 * KernelShark reloads its table and graph and shows the whole buffer, whose
 * end holds the newest events. Following is a single-shot QTimer in the GUI
 * thread, restarted when a refresh has finished, so refreshes never overlap
 * and the window handles input between them; one refresh is bounded by the
 * buffer's size. The window title says when the view was last refreshed.
 *
 * Built against installed headers only: KernelShark's GUI headers are not
 * installed, so the two exported, non-virtual members of KsMainWindow used
 * here are declared below; KsMainWindow is a QMainWindow.
 */
#include <sys/stat.h>

#include <QAction>
#include <QDateTime>
#include <QMainWindow>
#include <QString>
#include <QTimer>

#include <libkshark-plugin.h>

#include "tracemap-ks.h"

class KsMainWindow : public QMainWindow {
public:
	/* exported by libkshark-gui 2.2.1 */
	void loadDataFile(const QString &fileName);
	void addPluginMenu(QString place, void (*func)(KsMainWindow *));
};

namespace {

struct Follow {
	KsMainWindow *ks = nullptr;
	QTimer *timer = nullptr;
	int period_ms = 0;		/* 0: not following */
	unsigned long refreshes = 0;
	bool busy = false;
	bool started = false;		/* following was started once on open */
};

Follow follow;

void show_state(const QString &what)
{
	QString title = follow.ks->windowTitle();
	int cut = title.indexOf(" - tracemap: ");

	if (cut >= 0)
		title.truncate(cut);
	title += " - tracemap: " + what;
	if (follow.period_ms > 0)
		title += QString(", following every %1 ms").arg(follow.period_ms);
	follow.ks->setWindowTitle(title);
}

void refresh()
{
	const char *src = tmks_live_source();
	struct stat st;

	if (follow.busy)
		return;
	if (!src) {
		show_state("no live buffer open (open an instance directory or a .tracemap file)");
		follow.period_ms = 0;
		return;
	}
	if (stat(src, &st)) {
		follow.period_ms = 0;
		show_state(QString("%1 is gone, not refreshed").arg(src));
		return;
	}
	follow.busy = true;
	follow.ks->loadDataFile(QString(src));
	follow.busy = false;
	follow.refreshes++;
	show_state(QString("%1 events, refresh %2 at %3").arg(tmks_live_events())
		   .arg(follow.refreshes)
		   .arg(QDateTime::currentDateTime().toString("HH:mm:ss.zzz")));
}

void on_timer()
{
	if (follow.period_ms <= 0)
		return;
	refresh();
	if (follow.period_ms > 0)
		follow.timer->start(follow.period_ms);
}

/* refresh every @ms (default 1000), the first time at once when @now */
void start_following(int ms, bool now)
{
	follow.period_ms = ms > 0 ? ms : 1000;
	follow.timer->start(now ? 0 : follow.period_ms);
	if (!now)
		show_state("live");
}

void menu_refresh(KsMainWindow *)
{
	refresh();
}

void menu_follow(KsMainWindow *)
{
	start_following(tmks_follow_ms(), true);
}

void menu_stop(KsMainWindow *)
{
	follow.period_ms = 0;
	follow.timer->stop();
	show_state("stopped following");
}

} /* namespace */

/*
 * KernelShark: called once with the main window when the plugin is loaded
 * (before the file on the command line is opened). Returns no dialog.
 */
extern "C" void *KSHARK_MENU_PLUGIN_INITIALIZER(void *gui_ptr)
{
	KsMainWindow *ks = static_cast<KsMainWindow *>(gui_ptr);

	if (!ks || follow.ks)
		return nullptr;
	follow.ks = ks;
	follow.timer = new QTimer(ks);
	follow.timer->setSingleShot(true);
	QObject::connect(follow.timer, &QTimer::timeout, on_timer);

	ks->addPluginMenu("Tools/tracemap: refresh now", menu_refresh);
	ks->addPluginMenu("Tools/tracemap: follow", menu_follow);
	ks->addPluginMenu("Tools/tracemap: stop following", menu_stop);

	return nullptr;
}

void tmks_opened(void)
{
	if (!follow.ks || follow.started || tmks_follow_ms() <= 0)
		return;
	follow.started = true;
	/* called in KernelShark's loading thread: start the timer in the GUI thread */
	QMetaObject::invokeMethod(follow.ks, [] () {
		if (follow.period_ms <= 0)
			start_following(tmks_follow_ms(), false);
	}, Qt::QueuedConnection);
}
