// SPDX-License-Identifier: Apache-2.0
// The heat map's behaviour, embedded in every heat map sonde draws (see
// scripts.c): hovering a cell shows its interval, bucket and count in the
// line under the map, as its <title> tooltip does after a delay.
"use strict";
(function () {
	var svg = document.getElementById("heatmap");
	var details = document.getElementById("details");

	svg.addEventListener("mouseover", function (event) {
		var cell = event.target;

		if (cell.classList && cell.classList.contains("cell"))
			details.textContent = cell.querySelector("title").textContent;
	});
	svg.addEventListener("mouseout", function (event) {
		if (event.target.classList && event.target.classList.contains("cell"))
			details.textContent = " ";
	});
	window.heatmap = {
		cells: function () {
			return Array.prototype.map.call(svg.querySelectorAll("rect.cell"), function (cell) {
				return {
					column: Number(cell.dataset.column),
					row: Number(cell.dataset.row),
					count: Number(cell.dataset.count),
					fill: cell.getAttribute("fill"),
				};
			});
		},
	};
})();
