// SPDX-License-Identifier: Apache-2.0
// What both check pages share: load the SVG named in the query string
// (?svg=FILE) into the page's <object id="picture"> as a document of its
// own, run the page's check on it once loaded, and write what it found (or
// the error it met) into <pre id="result"> as JSON for run_all.py.
"use strict";
function runCheck(check) {
	var query = new URLSearchParams(location.search);
	var object = document.getElementById("picture");

	object.addEventListener("load", function () {
		var result = {};

		try {
			check(object.contentDocument, object.contentWindow, query, result);
		} catch (error) {
			result.error = String(error);
		}
		document.getElementById("result").textContent = JSON.stringify(result);
	});
	object.data = query.get("svg");
}
