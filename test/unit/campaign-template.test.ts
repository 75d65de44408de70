import { describe, expect, it } from "vitest";
import { parseTemplate, renderTemplate, TemplateError, templateVariables } from "../../src/messaging/campaigns/template.ts";

const ada = { name: "Ada", phone: "+447700900123", email: null, attributes: { city: "London", visits: 3 } };
const anon = { name: null, phone: "+15550001111", attributes: {} };

describe("campaign templates", () => {
  it("fills name, phone and attributes", () => {
    expect(renderTemplate("Hi {{name}} from {{attributes.city}} ({{phone}}), visit #{{attributes.visits}}", ada)).toBe(
      "Hi Ada from London (+447700900123), visit #3",
    );
  });

  it("uses defaults for missing values and drops empty ones cleanly", () => {
    expect(renderTemplate("Hi {{name|there}}!", anon)).toBe("Hi there!");
    expect(renderTemplate("Hi {{ name | friend }}, from {{attributes.city|your town}}", anon)).toBe("Hi friend, from your town");
    expect(renderTemplate("Hi {{name}}, welcome", anon)).toBe("Hi, welcome");
  });

  it("rejects unknown variables at parse time, naming them", () => {
    expect(() => parseTemplate("Hi {{nmae}}")).toThrow(TemplateError);
    expect(() => parseTemplate("{{attributes}}")).toThrow(/attributes/);
    expect(() => parseTemplate("{{attributes.a.b}}")).toThrow(TemplateError);
    let thrown: unknown;
    try {
      parseTemplate("x {{foo.bar}}");
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(TemplateError);
    expect((thrown as TemplateError).variable).toBe("foo.bar");
  });

  it("lists the variables and leaves plain text and lone braces alone", () => {
    expect(templateVariables("{{name|x}} {{attributes.k}}")).toEqual(["name", "attributes.k"]);
    expect(renderTemplate("no vars { here }", ada)).toBe("no vars { here }");
  });
});
