// Starts the API reference viewer on /openapi.json. A file rather than an inline script, so /docs
// can forbid inline scripts in its Content-Security-Policy.
window.addEventListener("DOMContentLoaded", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    // No call to the public validator service: nothing leaves this origin.
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
