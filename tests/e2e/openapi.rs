//! `GET /openapi.json` against what the server really does.

use e2e_harness::{Service, ServiceOptions, TestOrigin};
use serde_json::{Value, json};

use crate::{GOOGLE, urls};

/// A validator for one component schema of the document (refs resolve inside the document).
fn validator(document: &Value, schema: &str) -> jsonschema::Validator {
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": format!("#/components/schemas/{schema}"),
        "components": document["components"],
    });
    jsonschema::options()
        .should_validate_formats(true)
        .build(&root)
        .expect("valid schema")
}

pub(crate) fn assert_valid(document: &Value, schema: &str, instance: &Value) {
    let validator = validator(document, schema);
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{schema}: {errors:#?}\n{instance}");
}

#[tokio::test]
async fn the_document_describes_the_real_responses() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        live_timeout: "0.5",
        ..Default::default()
    });
    let key = service.key("acme", "3");
    let document = service.get("/openapi.json").await.json;
    assert_eq!(document["openapi"], "3.1.0");
    assert_eq!(document["info"]["version"], "2026-05-16");
    let operation = &document["paths"]["/v1/network/company-data"]["post"];
    assert_eq!(operation["operationId"], "getLinkedInCompanyData");
    assert_eq!(operation["tags"], json!(["Company Data"]));
    assert_eq!(
        document["components"]["securitySchemes"]["bearerAuth"]["bearerFormat"],
        "API key"
    );
    let request = &document["components"]["schemas"]["CompanyRequest"];
    assert_eq!(request["properties"]["liUrls"]["maxItems"], 200);
    assert_eq!(request["additionalProperties"], false);

    // Every status the endpoint produced here is documented, and its body matches the schema.
    let mut seen = Vec::new();
    let good = service
        .post(
            &key,
            &urls(&[GOOGLE, "https://www.linkedin.com/company/nope"]),
        )
        .await;
    assert_valid(&document, "CompanyResponse", &good.json);
    seen.push(good.status);
    let stored = service
        .post(&key, &json!({"liUrls": [GOOGLE], "maxAgeHours": 24}))
        .await;
    assert_valid(&document, "CompanyResponse", &stored.json);
    for reply in [
        service.post(&key, &json!({"liUrls": []})).await,
        service.post("cdk_wrong", &urls(&[GOOGLE])).await,
        service
            .post(&key, &urls(&["https://www.linkedin.com/company/slow"]))
            .await,
        service
            .post(
                &key,
                &urls(&[GOOGLE, "https://www.linkedin.com/company/audiense"]),
            )
            .await, // 402 now
    ] {
        assert_valid(&document, "Error", &reply.json);
        seen.push(reply.status);
    }
    assert_eq!(seen, [200, 400, 401, 504, 402]);
    for status in seen {
        assert!(
            operation["responses"][status.to_string()].is_object(),
            "{status} is not documented"
        );
    }
    // The request schema accepts what the server accepts and rejects what it rejects.
    let request_validator = validator(&document, "CompanyRequest");
    assert!(request_validator.is_valid(&urls(&["https://uk.linkedin.com/company/x"])));
    assert!(!request_validator.is_valid(&urls(&["https://www.linkedin.com/in/x"])));
    assert!(!request_validator.is_valid(&json!({"liUrls": [GOOGLE], "maxAgeHours": 25})));
}
