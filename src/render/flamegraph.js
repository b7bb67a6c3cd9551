// SPDX-License-Identifier: Apache-2.0
// The flame graph's behaviour, embedded in every SVG sonde draws (see
// scripts.c). It reads the layout from the frames' data attributes
// (data-start and data-samples in samples, data-depth), so zooming is a
// re-layout from numbers rather than from pixels already rounded. The
// functions tests drive are on window.flamegraph.
"use strict";
(function () {
	var svg = document.getElementById("flamegraph");
	var config = svg.dataset;
	var total = Number(config.total);
	var pad = Number(config.pad);
	var graphWidth = Number(config.graphWidth);
	var fontWidth = Number(config.fontWidth);
	var frames = Array.prototype.slice.call(svg.querySelectorAll("g.frame"));
	var details = document.getElementById("details");
	var matchedText = document.getElementById("matched");
	var resetZoomText = document.getElementById("reset-zoom");
	var searchButton = document.getElementById("search");
	var zoomed = null;
	var searchPattern = null;

	function info(g) {
		return {
			name: g.dataset.name,
			start: Number(g.dataset.start),
			samples: Number(g.dataset.samples),
			depth: Number(g.dataset.depth),
		};
	}

	// The label is the name cut to what fits, with ".." when cut; nothing
	// below three characters' width.
	function fit(g, width) {
		var text = g.querySelector("text");
		var name = g.dataset.name;
		var room = Math.floor((width - 6) / fontWidth);

		if (room < 3)
			text.textContent = "";
		else if (name.length <= room)
			text.textContent = name;
		else
			text.textContent = name.substring(0, room - 2) + "..";
	}

	function place(g, x, width) {
		var rect = g.querySelector("rect");
		var text = g.querySelector("text");

		rect.setAttribute("x", x.toFixed(2));
		rect.setAttribute("width", width.toFixed(2));
		text.setAttribute("x", (x + 3).toFixed(2));
		fit(g, width);
	}

	function layout(frame) {
		var base = frame ? info(frame) : { start: 0, samples: total, depth: -1 };
		var scale = graphWidth / base.samples;

		frames.forEach(function (g) {
			var f = info(g);
			var inside = f.start >= base.start && f.start + f.samples <= base.start + base.samples;
			var around = f.start <= base.start && f.start + f.samples >= base.start + base.samples;

			g.classList.remove("parent");
			g.style.display = "";
			if (f.depth >= base.depth && inside) {
				place(g, pad + (f.start - base.start) * scale, f.samples * scale);
			} else if (f.depth < base.depth && around) {
				g.classList.add("parent");
				place(g, pad, graphWidth);
			} else {
				g.style.display = "none";
			}
		});
	}

	function zoom(target) {
		var g = typeof target === "string" ? widest(target) : target;

		if (!g)
			return false;
		zoomed = g;
		layout(g);
		resetZoomText.style.opacity = "1";
		if (searchPattern !== null)
			search(searchPattern);
		return true;
	}

	function resetZoom() {
		zoomed = null;
		layout(null);
		resetZoomText.style.opacity = "0";
		if (searchPattern !== null)
			search(searchPattern);
	}

	function widest(name) {
		var best = null;

		frames.forEach(function (g) {
			if (g.dataset.name === name && (!best || info(g).samples > info(best).samples))
				best = g;
		});
		return best;
	}

	// Highlights the frames whose names match the regular expression and
	// returns the share of all samples they cover; nested matches count once.
	function search(pattern) {
		var re = pattern instanceof RegExp ? pattern : new RegExp(pattern);
		var spans = [];
		var covered = 0, end = -1;

		clearSearch();
		searchPattern = pattern;
		frames.forEach(function (g) {
			var rect = g.querySelector("rect");

			if (!re.test(g.dataset.name))
				return;
			g.classList.add("match");
			rect.dataset.fill = rect.getAttribute("fill");
			rect.setAttribute("fill", "rgb(230,0,230)");
			spans.push(info(g));
		});
		spans.sort(function (a, b) { return a.start - b.start; });
		spans.forEach(function (s) {
			var stop = s.start + s.samples;

			if (s.start >= end) {
				covered += s.samples;
				end = stop;
			} else if (stop > end) {
				covered += stop - end;
				end = stop;
			}
		});
		var percent = total ? 100 * covered / total : 0;
		matchedText.textContent = spans.length ? "Matched: " + percent.toFixed(1) + "%" : "";
		searchButton.textContent = "Reset Search";
		return { frames: spans.length, samples: covered, percent: percent };
	}

	function clearSearch() {
		searchPattern = null;
		frames.forEach(function (g) {
			var rect = g.querySelector("rect");

			if (!g.classList.contains("match"))
				return;
			g.classList.remove("match");
			rect.setAttribute("fill", rect.dataset.fill);
		});
		matchedText.textContent = "";
		searchButton.textContent = "Search";
	}

	function askSearch() {
		var pattern = window.prompt("Enter a search term (a regular expression, e.g. ^ext4_):",
					    searchPattern || "");

		if (pattern === null || pattern === "")
			return;
		try {
			search(pattern);
		} catch (error) {
			details.textContent = "Bad regular expression: " + error.message;
		}
	}

	function frameOf(node) {
		while (node && node !== svg) {
			if (node.classList && node.classList.contains("frame"))
				return node;
			node = node.parentNode;
		}
		return null;
	}

	svg.addEventListener("mouseover", function (event) {
		var g = frameOf(event.target);

		if (g)
			details.textContent = g.querySelector("title").textContent;
	});
	svg.addEventListener("mouseout", function (event) {
		if (frameOf(event.target))
			details.textContent = " ";
	});
	svg.addEventListener("click", function (event) {
		var g = frameOf(event.target);

		if (g)
			zoom(g);
		else if (event.target === resetZoomText)
			resetZoom();
		else if (event.target === searchButton)
			searchPattern === null ? askSearch() : clearSearch();
	});
	window.addEventListener("keydown", function (event) {
		if (event.key === "f" && (event.ctrlKey || event.metaKey)) {
			event.preventDefault();
			askSearch();
		} else if (event.key === "Escape") {
			clearSearch();
		}
	});

	layout(null);
	window.flamegraph = {
		search: search,
		clearSearch: clearSearch,
		zoom: zoom,
		resetZoom: resetZoom,
		zoomed: function () { return zoomed; },
		graphWidth: graphWidth,
		total: total,
	};
})();
