//! The airline tools as a live model receives them: the 14 function definitions (names,
//! parameter types, required fields and allowed values as the environment checks them), with
//! descriptions written for this project.
//!
//! Owns [`tool_definitions`]. Must not: run a tool (`crate::tau` does) or describe behaviour
//! the environment does not have.

use serde_json::{Value, json};

fn s() -> Value {
    json!({"type": "string"})
}

fn function(name: &str, description: &str, properties: Value, required: &[&str]) -> Value {
    json!({"type": "function", "function": {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required},
    }})
}

fn flights() -> Value {
    json!({"type": "array", "description": "Every flight of the trip, each a flight number and a date (YYYY-MM-DD).",
        "items": {"type": "object", "properties": {"flight_number": s(), "date": s()}, "required": ["flight_number", "date"]}})
}

fn passengers() -> Value {
    json!({"type": "array", "description": "Each passenger's first name, last name and date of birth (YYYY-MM-DD).",
        "items": {"type": "object", "properties": {"first_name": s(), "last_name": s(), "dob": s()}, "required": ["first_name", "last_name", "dob"]}})
}

fn cabin() -> Value {
    json!({"type": "string", "enum": ["basic_economy", "economy", "business"]})
}

/// The 14 airline tools, in the order of [`crate::tau::TOOL_NAMES`].
pub fn tool_definitions() -> Vec<Value> {
    vec![
        function(
            "book_reservation",
            "Create a reservation for a user, paid with the user's payment methods.",
            json!({
                "user_id": s(), "origin": s(), "destination": s(),
                "flight_type": {"type": "string", "enum": ["one_way", "round_trip"]},
                "cabin": cabin(), "flights": flights(), "passengers": passengers(),
                "payment_methods": {"type": "array", "description": "How the total is paid: payment ids from the user's profile and the amount on each.",
                    "items": {"type": "object", "properties": {"payment_id": s(), "amount": {"type": "number"}}, "required": ["payment_id", "amount"]}},
                "total_baggages": {"type": "integer"}, "nonfree_baggages": {"type": "integer"},
                "insurance": {"type": "string", "enum": ["yes", "no"]},
            }),
            &[
                "user_id",
                "origin",
                "destination",
                "flight_type",
                "cabin",
                "flights",
                "passengers",
                "payment_methods",
                "total_baggages",
                "nonfree_baggages",
                "insurance",
            ],
        ),
        function(
            "calculate",
            "Evaluate an arithmetic expression of numbers, + - * / and parentheses.",
            json!({"expression": s()}),
            &["expression"],
        ),
        function(
            "cancel_reservation",
            "Cancel every flight of a reservation and refund it to the original payment methods.",
            json!({"reservation_id": s()}),
            &["reservation_id"],
        ),
        function(
            "get_reservation_details",
            "Look up a reservation by its id.",
            json!({"reservation_id": s()}),
            &["reservation_id"],
        ),
        function(
            "get_user_details",
            "Look up a user's profile: name, membership, payment methods and reservation ids.",
            json!({"user_id": s()}),
            &["user_id"],
        ),
        function(
            "list_all_airports",
            "List the airports served, by IATA code and city.",
            json!({}),
            &[],
        ),
        function(
            "search_direct_flight",
            "Find direct flights between two airports (IATA codes) on a date (YYYY-MM-DD).",
            json!({"origin": s(), "destination": s(), "date": s()}),
            &["origin", "destination", "date"],
        ),
        function(
            "search_onestop_flight",
            "Find itineraries with one connection between two airports (IATA codes) departing on a date (YYYY-MM-DD).",
            json!({"origin": s(), "destination": s(), "date": s()}),
            &["origin", "destination", "date"],
        ),
        function(
            "send_certificate",
            "Give a user a travel certificate of the amount, as compensation.",
            json!({"user_id": s(), "amount": {"type": "number"}}),
            &["user_id", "amount"],
        ),
        function(
            "think",
            "Write down a line of reasoning; it changes nothing and returns nothing.",
            json!({"thought": s()}),
            &["thought"],
        ),
        function(
            "transfer_to_human_agents",
            "Hand the customer over to a human agent with a summary of the case; ends the conversation. Only when the request cannot be handled under the policy, or the customer asks for a human.",
            json!({"summary": s()}),
            &["summary"],
        ),
        function(
            "update_reservation_baggages",
            "Set a reservation's checked bags; extra bags are paid with the given payment id.",
            json!({"reservation_id": s(), "total_baggages": {"type": "integer"}, "nonfree_baggages": {"type": "integer"}, "payment_id": s()}),
            &[
                "reservation_id",
                "total_baggages",
                "nonfree_baggages",
                "payment_id",
            ],
        ),
        function(
            "update_reservation_flights",
            "Replace a reservation's flights and cabin (all flights, changed or not); the difference is paid or refunded with the given payment id.",
            json!({"reservation_id": s(), "cabin": cabin(), "flights": flights(), "payment_id": s()}),
            &["reservation_id", "cabin", "flights", "payment_id"],
        ),
        function(
            "update_reservation_passengers",
            "Replace a reservation's passenger details (the number of passengers cannot change).",
            json!({"reservation_id": s(), "passengers": passengers()}),
            &["reservation_id", "passengers"],
        ),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_definition_per_environment_tool_in_order() {
        let names: Vec<String> = super::tool_definitions()
            .iter()
            .map(|d| {
                d["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        assert_eq!(names, crate::tau::TOOL_NAMES);
    }
}
