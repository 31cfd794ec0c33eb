# SPDX-License-Identifier: GPL-2.0-only
#
# Turns the key=value lines of tm-bench (build/bench/raw.txt) into the
# Markdown tables of build/bench/results.md: medians over repetitions,
# same-repetition ratios, the highest lossless offered rate and the targets
# of issues 3 and 4.   awk -f bench/summarize.awk -v reps=3 raw.txt
# With -v plotdir=DIR it also writes the data of the figures (bench/plot.sh):
# DIR/cpu.dat (median CPU ns/event per consumer and offered rate) and
# DIR/lossless.dat (highest lossless rate per consumer, events/s).

function isort(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--)
			a[j + 1] = a[j]
		a[j + 1] = t
	}
}

# median of the values v[key, 1..reps] that exist; "" when none
function med(key,    a, n, r) {
	n = 0
	for (r = 1; r <= reps; r++)
		if ((key, r) in v)
			a[++n] = v[key, r]
	if (!n)
		return ""
	isort(a, n)
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

function maxv(key,    m, r) {
	m = ""
	for (r = 1; r <= reps; r++)
		if ((key, r) in v && (m == "" || v[key, r] + 0 > m + 0))
			m = v[key, r]
	return m
}

function nreps(name, rate,    n, r) {
	n = 0
	for (r = 1; r <= reps; r++)
		if ((name SUBSEP rate SUBSEP "written", r) in v)
			n++
	return n
}

# the same-repetition ratios A/B of one field into x[1..n], sorted; returns n
function ratios(a, b, rate, f, x,    n, r, ka, kb) {
	n = 0
	ka = a SUBSEP rate SUBSEP f
	kb = b SUBSEP rate SUBSEP f
	for (r = 1; r <= reps; r++)
		if ((ka, r) in v && (kb, r) in v && v[kb, r] + 0 > 0)
			x[++n] = v[ka, r] / v[kb, r]
	if (n)
		isort(x, n)
	return n
}

# median over repetitions of A/B of one field, both measured in the same repetition
function ratio(a, b, rate, f,    x, n) {
	n = ratios(a, b, rate, f, x)
	if (!n)
		return ""
	return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
}

# "lowest–highest of n" same-repetition ratios A/B of one field ("" when none)
function ratio_span(a, b, rate, f,    x, n) {
	n = ratios(a, b, rate, f, x)
	return n ? sprintf("%.2f–%.2f of %d", x[1], x[n], n) : ""
}

# A ratio table's cell of CPU per event A/B: the median, its verdict against
# LIMIT when OP is "<=" or ">=", and with SPAN set the lowest-highest in brackets
function ratio_cell(a, b, rate, op, limit, span,    x, out, sp) {
	x = ratio(a, b, rate, "cpu_per_ev")
	out = fx(x)
	if (x != "" && op != "")
		out = out " " verdict(op == "<=" ? x <= limit : x >= limit)
	sp = span ? ratio_span(a, b, rate, "cpu_per_ev") : ""
	return out (sp == "" ? "" : " (" sp ")")
}

function rname(r) {
	if (r == 0) return "max"
	if (r >= 1000000 && r % 1000000 == 0) return r / 1000000 "M"
	if (r >= 1000 && r % 1000 == 0) return r / 1000 "k"
	return r
}

function num(x) {
	if (x == "") return "–"
	x += 0
	if (x >= 1000000) return sprintf("%.2fM", x / 1000000)
	if (x >= 10000) return sprintf("%.0fk", x / 1000)
	return sprintf("%.0f", x)
}

function us(ns) { return ns == "" ? "–" : sprintf("%.0f µs", (ns + 0) / 1000) }

function bytes(b) {
	if (b == "" || b + 0 == 0) return "–"
	b += 0
	if (b >= 1048576) return sprintf("%.1f MiB", b / 1048576)
	return sprintf("%.0f KiB", b / 1024)
}

function stopcell(name, rate,    k, n, r, ok) {
	k = name SUBSEP rate SUBSEP "stopped"
	n = 0; ok = 0
	for (r = 1; r <= reps; r++)
		if ((k, r) in v) {
			n++
			ok += v[k, r]
		}
	if (!n) return "–"
	if (ok < n) return sprintf("did not stop (%d/%d)", n - ok, n)
	return sprintf("%.0f ms", med(name SUBSEP rate SUBSEP "stop_ms"))
}

function lostcell(name, rate,    m, x) {
	m = med(name SUBSEP rate SUBSEP "missing")
	x = maxv(name SUBSEP rate SUBSEP "missing")
	if (m == "") return "–"
	if (x + 0 > m + 0) return num(m) " (max " num(x) ")"
	return num(m)
}

function reportedcell(name, rate,    l, u) {
	l = med(name SUBSEP rate SUBSEP "reported_lost")
	u = maxv(name SUBSEP rate SUBSEP "reported_unknown")
	if (l == "") return "–"
	return num(l) (u + 0 > 0 ? " +?" : "") " / " num(med(name SUBSEP rate SUBSEP "kernel_overrun"))
}

# highest offered rate at which every repetition lost nothing ("max" above all)
function lossless(name,    i, r, best, k, n, rr, ok) {
	best = "none"
	for (i = 1; i <= nrates; i++) {
		r = rates[i]
		n = nreps(name, r)
		if (!n)
			continue
		ok = 1
		for (rr = 1; rr <= reps; rr++) {
			k = name SUBSEP r SUBSEP "missing"
			if ((k, rr) in v && v[k, rr] + 0 > 0)
				ok = 0
			if ((name SUBSEP r SUBSEP "failed_run", rr) in v)
				ok = 0
		}
		if (ok)
			best = r == 0 ? "max (" num(med(name SUBSEP r SUBSEP "achieved")) "/s)" : rname(r)
	}
	return best
}

function lossless_rate(name,    i, r, best, rr, ok, k) {
	best = -1
	for (i = 1; i <= nrates; i++) {
		r = rates[i]
		if (!nreps(name, r))
			continue
		ok = 1
		for (rr = 1; rr <= reps; rr++) {
			k = name SUBSEP r SUBSEP "missing"
			if ((k, rr) in v && v[k, rr] + 0 > 0)
				ok = 0
		}
		if (ok)
			best = r == 0 ? med(name SUBSEP r SUBSEP "achieved") + 0 : r
	}
	return best
}

# a consumer's label without Markdown
function plain(n,    l) {
	l = label[n] ? label[n] : n
	gsub("`", "", l)
	return l
}

# the figures' data: one column per consumer, one row per offered rate ("?" = not measured)
function plot_data(    f, o, n, i, line, c, all, nall, lr) {
	nall = 0
	for (o = 1; o <= n3; o++)
		if (order3[o] in seen)
			all[++nall] = order3[o]
	for (o = 1; o <= 3; o++)
		if (order4[o] in seen)
			all[++nall] = order4[o]
	f = plotdir "/cpu.dat"
	line = "rate"
	for (i = 1; i <= nall; i++)
		line = line "\t" plain(all[i])
	print line > f
	for (o = 1; o <= nrates; o++) {
		line = rname(rates[o])
		for (i = 1; i <= nall; i++) {
			c = med(all[i] SUBSEP rates[o] SUBSEP "cpu_per_ev")
			line = line "\t" (c == "" ? "?" : c)
		}
		print line > f
	}
	close(f)
	f = plotdir "/lossless.dat"
	for (i = 1; i <= nall; i++) {
		lr = lossless_rate(all[i])
		printf "%s\t%.0f\n", plain(all[i]), lr < 0 ? 0 : lr > f
	}
	close(f)
}

function fx(x) { return x == "" ? "–" : sprintf("%.2f", x) }

function row(name, rate,    lat) {
	lat = "–"
	if (med(name SUBSEP rate SUBSEP "lat_n") + 0 > 0)
		lat = us(med(name SUBSEP rate SUBSEP "lat_p50_ns")) " / " \
		      us(med(name SUBSEP rate SUBSEP "lat_p99_ns"))
	printf "| %s | %s | %s | %s%s | %s | %s | %s | %s | %s | %s |\n", label[name], rname(rate),
	       num(med(name SUBSEP rate SUBSEP "achieved")),
	       num(med(name SUBSEP rate SUBSEP "unique")), noseq[name] ? "*" : "",
	       lostcell(name, rate), reportedcell(name, rate),
	       num(med(name SUBSEP rate SUBSEP "cpu_per_ev")), stopcell(name, rate), lat,
	       pct(med(name SUBSEP rate SUBSEP "other_pct"))
}

function pct(x) { return x == "" ? "–" : sprintf("%.0f %%", x + 0) }

function row4(name, rate) {
	printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label[name], rname(rate),
	       num(med(name SUBSEP rate SUBSEP "achieved")),
	       num(med(name SUBSEP rate SUBSEP "unique")), lostcell(name, rate),
	       num(med(name SUBSEP rate SUBSEP "cpu_per_ev")),
	       bytes(med(name SUBSEP rate SUBSEP "file_bytes")), stopcell(name, rate),
	       pct(med(name SUBSEP rate SUBSEP "other_pct"))
}

# the rows of a consumer table: each of order[1..n] at each rate, or why it was not measured
function rows(order, n,    o, i, name) {
	for (o = 1; o <= n; o++) {
		name = order[o]
		if (name in unavail) {
			printf "| %s | – | – | – | – | – | – | – | not measured: %s | – |\n", label[name], unavail[name]
			continue
		}
		for (i = 1; i <= nrates; i++)
			if (nreps(name, rates[i]))
				row(name, rates[i])
	}
}

function verdict(ok) { return ok == "" ? "n/a" : ok ? "met" : "**missed**" }

BEGIN {
	n3 = split("lib lib-ll lib-busy tm-text tm-text-wm0 tm-raw tc-stream tracefs read mmap walk", order3, " ")
	split("tcm-record tc-record tcm-stream tc-stream", order4, " ")
	label["lib"] = "library stream (default)"
	label["lib-ll"] = "library stream (LOW_LATENCY: a wakeup per event)"
	label["lib-busy"] = "library stream (busy-poll)"
	label["tm-text"] = "`tracemap stream` text (into a file: read at its pace)"
	label["tm-text-wm0"] = "`tracemap stream --watermark 0` text (a terminal's pace)"
	label["tm-raw"] = "`tracemap stream --raw`"
	label["tc-stream"] = "`trace-cmd stream`"
	label["tracefs"] = "libtracefs iterate_raw_events"
	label["read"] = "read() + kbuffer"
	label["mmap"] = "minimal mmap + GET_READER (floor)"
	label["walk"] = "floor that walks and checks every record"
	label["tcm-record"] = "`trace-cmd-mmap record`"
	label["tc-record"] = "`trace-cmd record -d --no-filter`"
	label["tcm-stream"] = "`trace-cmd-mmap stream`"
	n10 = split("py-tm py-pipe-re py-tc-stream", order10, " ")
	label["py-tm"] = "Python `tracemap.Stream` callback, two fields"
	label["py-pipe-re"] = "Python: `trace_pipe` text + `re`"
	label["py-tc-stream"] = "Python: `trace-cmd stream` piped into a parser"
	nrates = 0
}

{
	delete kv
	for (i = 1; i <= NF; i++) {
		eq = index($i, "=")
		if (eq)
			kv[substr($i, 1, eq - 1)] = substr($i, eq + 1)
	}
	name = kv["name"]
	if ("unavailable" in kv) {
		unavail[name] = kv["unavailable"]
		gsub("_", " ", unavail[name])
		next
	}
	rate = kv["rate"] + 0
	if (!(rate in seenrate)) {
		seenrate[rate] = 1
		rates[++nrates] = rate
	}
	seen[name] = 1
	if (kv["error"] != "none") {
		errors[name] = errors[name] " " rname(rate) "/" kv["rep"] ":" kv["error"]
		v[name, rate, "failed_run", kv["rep"]] = 1
		next
	}
	if (kv["noseq"] == 1)
		noseq[name] = 1
	for (k in kv)
		if (k != "name" && k != "rate" && k != "rep" && k != "error")
			v[name, rate, k, kv["rep"]] = kv[k]
}

END {
	# rates in offered order, "max" (0) last
	for (i = 2; i <= nrates; i++) {
		t = rates[i]
		for (j = i - 1; j >= 1 && (rates[j] == 0 ? 1e18 : rates[j]) > (t == 0 ? 1e18 : t); j--)
			rates[j + 1] = rates[j]
		rates[j + 1] = t
	}

	if (nreps("alone", 0))
		printf "The writer alone (nothing reads the instance) reaches %s events/s (median); every " \
		       "reader slows it down, so *achieved* is below *offered* where the reader costs the writer.\n\n",
		       num(med("alone" SUBSEP 0 SUBSEP "achieved"))
	print "## Issue 3: consumers of one instance (writer CPU 0, consumer CPU 1, 1 MiB per CPU)"
	print ""
	print "Medians of " (base_reps ? base_reps : reps) " repetitions" \
	      (ratio_reps && ratio_reps != base_reps ? " (" ratio_reps " for " ratio_only ")" : "") \
	      ". *lost* = markers never delivered (sequence gaps; max over the"
	print "repetitions in brackets when it differs); *reported* = losses the consumer reported (\"+?\" ="
	print "flagged without a count) / the kernel's overrun counter. *CPU ns/event* = user+sys time of"
	print "every process of the consumer from ready to exit, per delivered marker. *stop* = SIGINT to exit."
	print "*latency* = CLOCK_MONOTONIC at delivery minus at write, one marker per ms written. *other* = CPU time"
	print "of everything else (other processes, interrupts, steal) on the two CPUs during the writer's run,"
	print "in % of both: high values mean the point was disturbed."
	print "\\* delivered counted without sequence numbers (kernel counters or output lines)."
	print ""
	print "| consumer | offered | achieved/s | delivered | lost | reported / overrun | CPU ns/event | stop | latency p50 / p99 | other |"
	print "|---|---|---|---|---|---|---|---|---|---|"
	rows(order3, n3)
	print ""
	print "## Issue 4: trace-cmd with the mapping vs stock trace-cmd"
	print ""
	print "| command | offered | achieved/s | recorded | lost | CPU ns/event (all trace-cmd processes) | trace.dat | stop | other |"
	print "|---|---|---|---|---|---|---|---|---|"
	for (o = 1; o <= 4; o++) {
		n = order4[o]
		if (n in unavail) {
			printf "| %s | – | – | – | – | – | – | not measured: %s | – |\n", label[n], unavail[n]
			continue
		}
		for (i = 1; i <= nrates; i++)
			if (nreps(n, rates[i]))
				row4(n, rates[i])
	}
	print ""
	print "## Highest offered rate with zero loss in every repetition"
	print ""
	print "| consumer | lossless up to |"
	print "|---|---|"
	for (o = 1; o <= n3; o++)
		if (order3[o] in seen)
			printf "| %s | %s |\n", label[order3[o]], lossless(order3[o])
	for (o = 1; o <= 3; o++)
		if (order4[o] in seen)
			printf "| %s | %s |\n", label[order4[o]], lossless(order4[o])
	print ""
	print "## Same-repetition ratios (median over repetitions) and targets"
	print ""
	print "The library against the floor and trace-cmd-mmap against stock record: the median, then the"
	print "lowest and highest of the repetitions."
	print ""
	print "| offered | library / floor CPU (≤ 1.25) | trace-cmd stream / library CPU (≥ 10) | trace-cmd stream / tracemap text CPU (≥ 2) | trace-cmd-mmap / stock record CPU (≤ 1.10, else the breakdown below) | trace-cmd-mmap / stock stream CPU |"
	print "|---|---|---|---|---|---|"
	for (i = 1; i <= nrates; i++) {
		r = rates[i]
		if (!nreps("mmap", r) && !nreps("tc-stream", r) && !nreps("tc-record", r))
			continue
		printf "| %s | %s | %s | %s | %s | %s |\n", rname(r),
		       ratio_cell("lib", "mmap", r, "<=", 1.25, 1),
		       ratio_cell("tc-stream", "lib", r, ">=", 10),
		       ratio_cell("tc-stream", "tm-text", r, ">=", 2),
		       ratio_cell("tcm-record", "tc-record", r, "<=", 1.10, 1),
		       ratio_cell("tcm-stream", "tc-stream", r)
	}
	if ("walk" in seen) {
		print ""
		print "Where the library stands between the floor, which reads no event, and the floor"
		print "that also walks every record it is handed with the library's record walker and checks it as the"
		print "library's callback does (one loop: no merge, no gate before GET_READER, no callback):"
		print ""
		print "| offered | library / walking floor CPU | walking floor / floor CPU |"
		print "|---|---|---|"
		for (i = 1; i <= nrates; i++) {
			r = rates[i]
			if (!nreps("walk", r))
				continue
			printf "| %s | %s | %s |\n", rname(r),
			       ratio_cell("lib", "walk", r, "", 0, 1),
			       ratio_cell("walk", "mmap", r, "", 0, 1)
		}
	}
	print ""
	print "| target | measured | verdict |"
	print "|---|---|---|"
	if ("lib" in seen) {
		ok = 1; s = ""
		for (i = 1; i <= nrates; i++) {
			if (!nreps("lib", rates[i]))
				continue
			m = maxv("lib" SUBSEP rates[i] SUBSEP "missing")
			s = s rname(rates[i]) ": " num(m) " "
			if (m + 0 > 0) ok = 0
		}
		printf "| library stream: zero loss at every offered rate | lost (max of reps) %s | %s |\n", s, verdict(ok)
		ok = 1; s = ""
		for (i = 1; i <= nrates; i++) {
			if (!nreps("lib", rates[i]))
				continue
			m = med("lib" SUBSEP rates[i] SUBSEP "lat_p99_ns")
			s = s rname(rates[i]) ": " us(m) " "
			if (m + 0 >= 150000000) ok = 0
		}
		printf "| library p99 latency < 150 ms (default settings: buffer_percent 50, 100 ms tick) | %s | %s |\n", s, verdict(ok)
	}
	if ("lib-busy" in seen) {
		ok = 1; s = ""
		for (i = 1; i <= nrates; i++) {
			if (!nreps("lib-busy", rates[i]))
				continue
			m = med("lib-busy" SUBSEP rates[i] SUBSEP "lat_p99_ns")
			s = s rname(rates[i]) ": " us(m) " "
			if (m + 0 >= 50000) ok = 0
		}
		printf "| library p99 latency < 50 µs (busy-poll) | %s | %s |\n", s, verdict(ok)
	}
	if ("tm-text" in seen && "tc-stream" in seen) {
		a = lossless_rate("tm-text"); b = lossless_rate("tc-stream")
		printf "| `tracemap stream` lossless rate ≥ 3x `trace-cmd stream` | %s vs %s | %s |\n",
		       a < 0 ? "none" : num(a), b < 0 ? "none" : num(b),
		       a < 0 ? verdict(0) : b <= 0 ? verdict(1) " (stock has no lossless rate)" : verdict(a >= 3 * b)
	}
	if ("tm-text" in seen) {
		ok = 1; s = ""
		for (i = 1; i <= nrates; i++) {
			k = "tm-text" SUBSEP rates[i]
			if (!nreps("tm-text", rates[i]))
				continue
			m = maxv(k SUBSEP "stop_ms")
			s = s rname(rates[i]) ": " num(m) " ms "
			for (rr = 1; rr <= reps; rr++)
				if ((k SUBSEP "stopped", rr) in v && (v[k, "stopped", rr] + 0 == 0 || v[k, "stop_ms", rr] + 0 > 1000))
					ok = 0
		}
		printf "| `tracemap stream` stops within 1 s of SIGINT | max %s | %s |\n", s, verdict(ok)
	}
	if ("tcm-record" in seen && "tc-record" in seen) {
		ok = 1; s = ""
		for (i = 1; i <= nrates; i++) {
			r = rates[i]
			if (!nreps("tc-record", r) || !nreps("tcm-record", r))
				continue
			if (maxv("tc-record" SUBSEP r SUBSEP "missing") + 0 == 0) {
				m = maxv("tcm-record" SUBSEP r SUBSEP "missing")
				s = s rname(r) ": " num(m) " "
				if (m + 0 > 0) ok = 0
			}
		}
		printf "| `trace-cmd-mmap record`: zero loss wherever stock has none | lost %s | %s |\n", s, verdict(ok)
	}
	if ("tcm-stream" in seen && "tc-stream" in seen) {
		ok = 1; s = ""
		for (i = 1; i <= nrates; i++) {
			r = rates[i]
			if (!nreps("tc-stream", r) || !nreps("tcm-stream", r))
				continue
			if (maxv("tc-stream" SUBSEP r SUBSEP "missing") + 0 > 0) {
				m = maxv("tcm-stream" SUBSEP r SUBSEP "missing")
				s = s rname(r) ": " num(m) " "
				if (m + 0 > 0) ok = 0
			}
		}
		# both lose where trace-cmd's one process that prints the text falls behind
		printf "| `trace-cmd-mmap stream` lossless where stock loses | lost %s | %s |\n", s == "" ? "(stock lost nothing)" : s,
		       verdict(ok) (ok ? "" : ": trace-cmd's text, not the reader (bench/README.md)")
		ok = 1; s = ""
		for (i = 1; i <= nrates; i++) {
			k = "tcm-stream" SUBSEP rates[i]
			if (!nreps("tcm-stream", rates[i]))
				continue
			for (rr = 1; rr <= reps; rr++)
				if ((k SUBSEP "stopped", rr) in v && (v[k, "stopped", rr] + 0 == 0 || v[k, "stop_ms", rr] + 0 > 1000))
					ok = 0
			s = s rname(rates[i]) ": " stopcell("tcm-stream", rates[i]) " "
		}
		printf "| `trace-cmd-mmap stream` stops within 1 s | %s | %s |\n", s, verdict(ok)
	}
	if ("py-tm" in seen) {
		print ""
		print "## Issue 10: Python consumers"
		print ""
		print "CPU of the interpreter and its children (trace-cmd) from ready to exit, per delivered"
		print "marker. Events/s at equal CPU is the inverse of CPU ns/event."
		print ""
		print "| consumer | offered | achieved/s | delivered | lost | reported / overrun | CPU ns/event | stop | latency p50 / p99 | other |"
		print "|---|---|---|---|---|---|---|---|---|---|"
		rows(order10, n10)
		print ""
		print "| target | measured | verdict |"
		print "|---|---|---|"
		m = nreps("py-tm", 500000) ? maxv("py-tm" SUBSEP 500000 SUBSEP "missing") : ""
		printf "| Python callback lossless at 500k ev/s offered | %s | %s |\n",
		       m == "" ? "not measured" : "lost " num(m), m == "" ? "n/a" : verdict(m + 0 == 0)
		for (i = 1; i <= nrates; i++) {
			r = rates[i]
			a = ratio("py-pipe-re", "py-tm", r, "cpu_per_ev")
			b = ratio("py-tc-stream", "py-tm", r, "cpu_per_ev")
			if (a == "" && b == "")
				continue
			best = a == "" ? b : b == "" ? a : a < b ? a : b
			printf "| %s: events/s at equal CPU ≥ 5x the best other way | trace_pipe+re %s, trace-cmd stream %s | %s |\n",
			       rname(r), fx(a), fx(b), verdict(best >= 5)
		}
	}
	if (plotdir != "")
		plot_data()
	first = 1
	for (n in errors) {
		if (first) {
			print ""
			print "Failed points (not in the medians):"
			print ""
			first = 0
		}
		printf "- %s:%s\n", label[n] ? label[n] : n, errors[n]
	}
}
